/**
 * Security review finding 2: a stored secret is only sent to the target it was entered
 * for. Moving an environment's FTP/SSH host, port or user, a git config's host, or a
 * webhook's URL to another host needs the secret again.
 */
import t from "tap";
import { startTestApp } from "../../support/app.ts";
import { buildEnvironment } from "../../support/deploymentFactories.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { startFtpPeer } from "../../support/peers/ftpPeer.ts";

t.test("stored secrets do not follow a changed target", async (t) => {
  const app = await startTestApp(t);
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = await buildProject(app.pool, user.id);
  const owners = await startFtpPeer({ password: "Owner-Ftp-Secret-0123" });
  // Another server, which quotes any wrong password it is sent in its reply.
  const other = await startFtpPeer({ password: "Other-Ftp-Secret-0123", echoPasswordOnFailure: true });
  t.teardown(async () => {
    await owners.close();
    await other.close();
  });
  const ftp = { host: "127.0.0.1", port: owners.port, username: owners.username, password: owners.password, remote_path: "/" };
  const env = await buildEnvironment(app.url, token, project, { ftp_config: ftp });

  t.test("FTP: another port without the password is refused; the owner's password never reaches it", async (t) => {
    const { password: _omitted, ...withoutPassword } = ftp;
    const moved = await api.put(`/api/environments/${env}`, { ftp_config: { ...withoutPassword, port: other.port } });
    t.equal(moved.status, 422, moved.text);
    t.match(moved.body.errors["ftp_config.password"], [/required when the target changes/]);
    const tested = await api.post("/api/deployments/test-connection", { environment_id: env });
    t.equal(tested.status, 200);
    t.equal(tested.body.ok, true, "still the owner's server");
    t.notMatch(tested.text, owners.password);
    t.equal(other.stats.logins, 0);
    const sameServer = await api.put(`/api/environments/${env}`, { ftp_config: { ...withoutPassword, remote_path: "/www" } });
    t.equal(sameServer.status, 200, "the same target keeps its stored password");
    const newUser = await api.put(`/api/environments/${env}`, { ftp_config: { ...withoutPassword, username: "someone-else" } });
    t.equal(newUser.status, 422, "another user name is another target too");
    const given = await api.put(`/api/environments/${env}`, { ftp_config: { ...withoutPassword, port: other.port, password: other.password } });
    t.equal(given.status, 200, "with the secret given again the move is fine");
    t.equal((await api.post("/api/deployments/test-connection", { environment_id: env })).body.ok, true);
  });

  t.test("SSH: another host without the password or key is refused", async (t) => {
    const ssh = { host: "127.0.0.1", port: 2222, username: "deploy", auth_method: "password", password: "Ssh-Secret-0123456", remote_path: "/srv" };
    const id = await buildEnvironment(app.url, token, project, { name: "Ssh", ssh_config: ssh });
    const { password: _omitted, ...rest } = ssh;
    const moved = await api.put(`/api/environments/${id}`, { ssh_config: { ...rest, host: "127.0.0.2" } });
    t.equal(moved.status, 422, moved.text);
    t.ok(moved.body.errors["ssh_config.password"]);
    t.equal((await api.put(`/api/environments/${id}`, { ssh_config: { ...rest, remote_path: "/srv/app" } })).status, 200);
  });

  t.test("git: another GitLab host without the token is refused", async (t) => {
    const git = { project_id: 7, branch: "main", gitlab_url: "http://127.0.0.1:8929", access_token: "glpat-Secret0123456789" };
    const id = await buildEnvironment(app.url, token, project, { name: "Git", git_config: git });
    const { access_token: _omitted, ...rest } = git;
    const moved = await api.put(`/api/environments/${id}`, { git_config: { ...rest, gitlab_url: "http://127.0.0.2:8929" } });
    t.equal(moved.status, 422, moved.text);
    t.match(moved.body.errors["git_config.access_token"], [/required when the target changes/]);
    t.equal((await api.put(`/api/environments/${id}`, { git_config: { ...rest, branch: "develop" } })).status, 200);
  });

  t.test("webhooks: another host needs the secret key again", async (t) => {
    const created = await api.post(`/api/projects/${project}/webhooks`, { event_type: "manual_trigger", target_url: "http://127.0.0.1:9/hook", secret_key: "hook-secret-0123456789" });
    t.equal(created.status, 201, created.text);
    const id = created.body.webhook.id;
    const moved = await api.put(`/api/webhooks/${id}`, { target_url: "http://127.0.0.2:9/hook" });
    t.equal(moved.status, 422, moved.text);
    t.ok(moved.body.errors.secret_key);
    t.equal((await api.get(`/api/webhooks/${id}`)).body.webhook.target_url, "http://127.0.0.1:9/hook");
    t.equal((await api.put(`/api/webhooks/${id}`, { target_url: "http://127.0.0.1:9/other" })).status, 200, "same host, same secret");
    t.equal((await api.put(`/api/webhooks/${id}`, { target_url: "http://127.0.0.2:9/hook", secret_key: "new-hook-secret-0123456" })).status, 200);
  });
});
