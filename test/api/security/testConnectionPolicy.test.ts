/**
 * Security review finding 4: testing a stored environment's connection sends its secrets
 * and pins the SSH host key, so it needs the right to configure the project's deployments
 * (owner, team admin), as the policy says; a member gets 403 and nothing is pinned.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildEnvironment } from "../../support/deploymentFactories.ts";
import { buildProject, buildTeam, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { startSshPeer } from "../../support/peers/sshPeer.ts";

t.test("testing a stored environment needs the manage right", async (t) => {
  const app = await startTestApp(t);
  const peer = await startSshPeer();
  t.teardown(() => peer.close());
  const owner = await buildUserWithToken(app.pool);
  const member = await buildUserWithToken(app.pool);
  const project = await buildProject(app.pool, owner.user.id);
  await buildTeam(app.pool, owner.user.id, { [member.user.id]: 3 }, [project]);
  const env = await buildEnvironment(app.url, owner.token, project, {
    ssh_config: { host: peer.host, port: peer.port, username: peer.username, auth_method: "password", password: peer.password, remote_path: "/" },
  });
  const pinned = () => app.pool.oneFirst(sql.type(z.object({ f: z.string().nullable() }))`select ssh_host_key_fingerprint as f from environments where id = ${env}`);

  const refused = await client(app.url, member.token).post("/api/deployments/test-connection", { environment_id: env });
  t.equal(refused.status, 403, refused.text);
  t.equal(refused.body.code, "forbidden");
  t.equal(peer.stats.logins + peer.stats.authFailures, 0, "the member's request sent nothing to the server");
  t.equal(await pinned(), null, "and pinned no host key");

  const allowed = await client(app.url, owner.token).post("/api/deployments/test-connection", { environment_id: env });
  t.equal(allowed.status, 200, allowed.text);
  t.equal(allowed.body.ok, true, allowed.body.message);
  t.equal(await pinned(), peer.hostKeyFingerprint, "the owner's test pins the key");
});
