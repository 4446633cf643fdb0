/**
 * A stored FTP password entered for FTPS (`secure`) never goes out over plain FTP unless the
 * owner sends it again: turning `secure` off without the password is 422, and an update that
 * leaves `secure` out keeps it. Checked against a real (plain) FTP server, which must not see
 * a login with the stored password after a refused downgrade.
 */
import t from "tap";
import { startTestApp } from "../../support/app.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { startFtpPeer } from "../../support/peers/ftpPeer.ts";

t.test("turning FTPS off needs the password again", async (t) => {
  const peer = await startFtpPeer();
  t.teardown(() => peer.close());
  const app = await startTestApp(t);
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = await buildProject(app.pool, user.id);
  const site = { host: peer.host, port: peer.port, username: peer.username, remote_path: "/www" };
  const created = await api.post(`/api/projects/${project}/environments`, { name: "Live", type: "production", ftp_config: { ...site, password: peer.password, secure: true } });
  t.equal(created.status, 201, created.text);
  const id = created.body.environment.id as number;
  const read = async () => (await api.get(`/api/projects/${project}/environments`)).body.environments[0].ftp_config;

  const edited = await api.put(`/api/environments/${id}`, { ftp_config: { ...site, remote_path: "/www2" } });
  t.equal(edited.status, 200, edited.text);
  t.match(edited.body.environment.ftp_config, { remote_path: "/www2", secure: true, has_password: true }, "an update without secure keeps FTPS");

  const downgraded = await api.put(`/api/environments/${id}`, { ftp_config: { ...site, secure: false } });
  t.equal(downgraded.status, 422, downgraded.text);
  t.match(downgraded.body, { code: "validation_failed", errors: { "ftp_config.password": [/secure is turned off.*in the clear/] } });
  t.match(await read(), { remote_path: "/www2", secure: true, has_password: true }, "nothing changed");
  const tested = await api.post("/api/deployments/test-connection", { environment_id: id });
  t.equal(tested.status, 200, tested.text);
  t.equal(tested.body.ok, false, "the plain server offers no TLS, so the test fails before logging in");
  t.equal(peer.stats.logins, 0, "the stored password was not sent in the clear");

  const implicit = await api.put(`/api/environments/${id}`, { ftp_config: { ...site, secure: "implicit" } });
  t.equal(implicit.status, 200, "implicit FTPS is still encrypted");
  t.equal((await api.put(`/api/environments/${id}`, { ftp_config: { ...site, secure: false } })).status, 422, "from implicit FTPS too");
  t.equal((await api.put(`/api/environments/${id}`, { ftp_config: { ...site, secure: true } })).status, 200);

  const consented = await api.put(`/api/environments/${id}`, { ftp_config: { ...site, secure: false, password: peer.password } });
  t.equal(consented.status, 200, consented.text);
  t.match(consented.body.environment.ftp_config, { secure: false, has_password: true });
  const plain = await api.post("/api/deployments/test-connection", { environment_id: id });
  t.match(plain.body, { ok: true }, plain.text);
  t.equal(peer.stats.logins, 1, "plain FTP once the owner sent the password for it");

  const edit = await api.put(`/api/environments/${id}`, { ftp_config: { ...site, remote_path: "/www3" } });
  t.equal(edit.status, 200, "a plain environment is edited without its password as before");
  t.match(edit.body.environment.ftp_config, { secure: false, has_password: true });
});
