/**
 * Retrying a commit whose git connection was removed says so: it is refused with 409
 * `git_connection_deleted` naming the connection, not with the deleted-environment answer
 * of a deployment (a commit through a connection never had an environment), and nothing is
 * queued.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { upsertConnection } from "../../../shared/git/store.ts";
import { startTestApp } from "../../support/app.ts";
import { buildGeneration } from "../../support/deploymentFactories.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";

t.test("a retry after the commit's git connection was removed", async (t) => {
  // GitHub sign-in configured (the connection's instance): a connection of a provider the server
  // no longer has is refused before anything is queued (shared/git/connectionState.ts).
  const app = await startTestApp(t, { env: { GITHUB_CLIENT_ID: "client-id", GITHUB_CLIENT_SECRET: "client-secret" } });
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = await buildProject(app.pool, user.id);
  const generation = await buildGeneration(app.pool, project, user.id, { "index.ts": "export {};\n" });
  const connection = await upsertConnection(app.pool, app.config.appKey, {
    userId: user.id,
    provider: "github",
    instanceUrl: "https://github.com",
    apiBase: "https://api.github.com",
    account: { id: "1", login: "octo", name: null },
    tokens: { accessToken: "gho_Example0123456789", refreshToken: null, expiresAt: null, scopes: "repo" },
  });
  const res = await api.post(`/api/projects/${project}/git/commit`, { code_generation_id: generation, connection_id: connection.id, repository: "acme/site", branch: "x", message: "m" });
  t.equal(res.status, 202, res.text);
  const id = res.body.deployment.id as number;
  await app.pool.query(sql.type(z.object({}))`update deployments set status = 'failed', finished_at = now() where id = ${id}`);
  t.equal((await api.delete(`/api/git/connections/${connection.id}`)).status, 200);

  const retried = await api.post(`/api/deployments/${id}/retry`);
  t.equal(retried.status, 409, retried.text);
  t.match(retried.body, { code: "git_connection_deleted", message: /git connection of this commit was removed/ });
  t.equal((await api.get(`/api/deployments/${id}`)).body.deployment.status, "failed", "nothing queued");
});
