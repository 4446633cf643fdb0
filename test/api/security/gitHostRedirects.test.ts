/**
 * A GitLab personal token travels in the PRIVATE-TOKEN header, which fetch keeps when it
 * follows a redirect to another host (it drops only Authorization), and a 307 makes fetch
 * send the body, a commit's files, again. The GitLab stand-in answers one request with a
 * redirect to a second loopback server that records what reaches it: a connection test (302
 * on the project read), a deployment (307 on the commit) and a commit through an environment
 * (302 on the branch read) each fail with a clear message, and the second server receives
 * nothing at all. GitHub and Bitbucket send their credentials in Authorization, which fetch
 * drops; a 307 on the request that carries the files is refused all the same.
 */
import t from "tap";
import { startTestApp } from "../../support/app.ts";
import { buildEnvironment, buildGeneration, waitForDeployment } from "../../support/deploymentFactories.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { startBitbucketStandIn } from "../../support/peers/bitbucketPeer.ts";
import { startGithubStandIn } from "../../support/peers/githubPeer.ts";
import { startGitlabStandIn } from "../../support/peers/gitlabPeer.ts";
import { startWebhookReceiver } from "../../support/webhookReceiver.ts";

t.test("a GitLab redirect to another host is not followed with the token", async (t) => {
  const gl = await startGitlabStandIn();
  t.teardown(() => gl.close());
  const elsewhere = await startWebhookReceiver(t);
  const app = await startTestApp(t, { worker: true });
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = await buildProject(app.pool, user.id);
  const gitConfig = { project_id: gl.projectId, branch: "main", access_token: gl.token, gitlab_url: gl.url };
  const env = await buildEnvironment(app.url, token, project, { name: "GitLab", type: "production", git_config: gitConfig });
  const files = { "index.php": "<?php echo 'generated';\n" };

  await t.test("connection test: 302 on the project read", async (t) => {
    gl.redirectOnce({ method: "GET", pattern: /^\/api\/v4\/projects\/42$/, status: 302, location: `${elsewhere.url}/api/v4/projects/42` });
    const tested = await api.post("/api/deployments/test-connection", { git_config: gitConfig });
    t.equal(tested.status, 200, tested.text);
    t.match(tested.body, { ok: false, code: "network_target_refused", message: /redirect to http:\/\/127\.0\.0\.1:\d+.*not followed/ });
    t.same(elsewhere.received, [], "the other host got no request");
  });

  await t.test("deployment: 307 on the commit", async (t) => {
    gl.redirectOnce({ method: "POST", pattern: /^\/api\/v4\/projects\/42\/repository\/commits$/, status: 307, location: `${elsewhere.url}/api/v4/projects/42/repository/commits` });
    const created = await api.post("/api/deployments", { environment_id: env, code_generation_id: await buildGeneration(app.pool, project, user.id, files) });
    t.equal(created.status, 201, created.text);
    t.equal((await api.post(`/api/deployments/${created.body.deployment.id}/execute`)).status, 202);
    const done = await waitForDeployment(app.url, token, created.body.deployment.id);
    t.match(done, { status: "failed", error_code: "network_target_refused", error: /redirect to .*not followed/ });
    t.same(elsewhere.received, [], "the other host got neither the token nor the files");
    t.equal(gl.repo.branches.has(`schemaforge/deployment-${created.body.deployment.id}`), false, "nothing was committed");
  });

  await t.test("commit through the environment: 302 on the branch read", async (t) => {
    gl.redirectOnce({ method: "GET", pattern: /^\/api\/v4\/projects\/42\/repository\/branches\/generated$/, status: 302, location: `${elsewhere.url}/api/v4/projects/42/repository/branches/generated` });
    const generation = await buildGeneration(app.pool, project, user.id, files);
    const started = await api.post(`/api/projects/${project}/git/commit`, { code_generation_id: generation, environment_id: env, branch: "generated", message: "Regenerate" });
    t.equal(started.status, 202, started.text);
    const done = await waitForDeployment(app.url, token, started.body.deployment.id);
    t.match(done, { status: "failed", error_code: "network_target_refused" });
    t.same(elsewhere.received, [], "the other host got no request");
  });

  await t.test("without a redirect the same environment works", async (t) => {
    const tested = await api.post("/api/deployments/test-connection", { environment_id: env });
    t.match(tested.body, { ok: true });
    t.same(elsewhere.received, []);
  });

  await t.test("GitHub and Bitbucket deployments: 307 on the request with the files", async (t) => {
    const gh = await startGithubStandIn();
    const bb = await startBitbucketStandIn();
    t.teardown(() => Promise.all([gh.close(), bb.close()]));
    const hosts = [
      {
        name: "GitHub",
        git_config: { owner: gh.owner, repo: gh.name, branch: "main", access_token: gh.token, api_url: gh.url },
        redirect: () => gh.redirectOnce({ method: "POST", pattern: /^\/repos\/acme\/site\/git\/trees$/, status: 307, location: `${elsewhere.url}/repos/acme/site/git/trees` }),
      },
      {
        name: "Bitbucket",
        git_config: { workspace: bb.workspace, repo: bb.slug, branch: "main", username: bb.username, app_password: bb.appPassword, api_url: `${bb.url}/2.0` },
        redirect: () => bb.redirectOnce({ method: "POST", pattern: /^\/2\.0\/repositories\/acme\/site\/src$/, status: 307, location: `${elsewhere.url}/2.0/repositories/acme/site/src` }),
      },
    ];
    for (const host of hosts) {
      const hostEnv = await buildEnvironment(app.url, token, project, { name: host.name, type: "staging", git_config: host.git_config });
      host.redirect();
      const created = await api.post("/api/deployments", { environment_id: hostEnv, code_generation_id: await buildGeneration(app.pool, project, user.id, files) });
      t.equal(created.status, 201, created.text);
      t.equal((await api.post(`/api/deployments/${created.body.deployment.id}/execute`)).status, 202);
      const done = await waitForDeployment(app.url, token, created.body.deployment.id);
      t.match(done, { status: "failed", error_code: "network_target_refused", error: /redirect to .*not followed/ }, host.name);
      t.same(elsewhere.received, [], `${host.name}: the other host got neither credentials nor files`);
    }
  });
});
