/**
 * An FTP or SSH `host` that is no host name at all (an e-mail-like `user@host`, a path, an
 * unclosed IPv6 bracket, a space) is refused with 422 when an environment is saved or an inline
 * connection is tested, instead of being stored and failing at the first deployment. Names
 * that merely do not resolve (yet) are still accepted.
 */
import t from "tap";
import { startTestApp } from "../../support/app.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";

t.test("hosts that are not host names", async (t) => {
  const app = await startTestApp(t);
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = await buildProject(app.pool, user.id);
  const ftp = (host: string) => ({ host, username: "deployer", password: "Ftp-Secret-0123456", remote_path: "/www" });
  const ssh = (host: string) => ({ host, username: "deployer", auth_method: "password", password: "Ssh-Secret-0123456", remote_path: "/www" });

  for (const host of ["deployer@ftp.example.com", "ftp.example.com/www", "[::1", "ftp example.com"]) {
    const env = await api.post(`/api/projects/${project}/environments`, { name: "Live", type: "production", ftp_config: ftp(host), ssh_config: ssh(host) });
    t.equal(env.status, 422, `${host}: ${env.text}`);
    t.match(env.body.errors, { "ftp_config.host": [/not a host name|not a valid/], "ssh_config.host": [/not a host name|not a valid/] }, host);
    const tested = await api.post("/api/deployments/test-connection", { ftp_config: ftp(host) });
    t.equal(tested.status, 422, `test-connection ${host}: ${tested.text}`);
  }
  const environments = await api.get(`/api/projects/${project}/environments`);
  t.same(environments.body.environments, [], "none stored");

  const unresolved = await api.post(`/api/projects/${project}/environments`, { name: "Live", type: "production", ftp_config: ftp("not-yet-in-dns.invalid") });
  t.equal(unresolved.status, 201, `a name DNS does not know is kept: ${unresolved.text}`);
});
