/**
 * A commit or push made through a user's own git connection runs with that connection's
 * token, so only the connection's owner may run it again: another member who may deploy
 * (the project's owner included) gets 403 and nothing is queued; the owner's retry runs.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { upsertConnection } from "../../../shared/git/store.ts";
import { startTestApp } from "../../support/app.ts";
import { buildGeneration } from "../../support/deploymentFactories.ts";
import { buildProject, buildTeam, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";

t.test("only the owner of a commit's git connection may retry it", async (t) => {
  // GitHub sign-in configured (the connection's instance): a connection of a provider the server
  // no longer has is refused before anything is queued (shared/git/connectionState.ts).
  const app = await startTestApp(t, { env: { GITHUB_CLIENT_ID: "client-id", GITHUB_CLIENT_SECRET: "client-secret" } });
  const owner = await buildUserWithToken(app.pool);
  const member = await buildUserWithToken(app.pool);
  const admin = await buildUserWithToken(app.pool);
  const project = await buildProject(app.pool, owner.user.id);
  await buildTeam(app.pool, owner.user.id, { [member.user.id]: 3, [admin.user.id]: 2 }, [project]);
  const generation = await buildGeneration(app.pool, project, owner.user.id, { "index.ts": "export {};\n" });
  const connection = await upsertConnection(app.pool, app.config.appKey, {
    userId: member.user.id,
    provider: "github",
    instanceUrl: "https://github.com",
    apiBase: "https://api.github.com",
    account: { id: "1", login: "octo", name: null },
    tokens: { accessToken: "gho_Example0123456789", refreshToken: null, expiresAt: null, scopes: "repo" },
  });
  const asMember = client(app.url, member.token);
  const res = await asMember.post(`/api/projects/${project}/git/commit`, { code_generation_id: generation, connection_id: connection.id, repository: "acme/site", branch: "x", message: "m" });
  t.equal(res.status, 202, res.text);
  const id = res.body.deployment.id as number;
  const state = () => app.pool.one(sql.type(z.object({ status: z.string(), job_id: z.number().nullable() }))`select status, job_id from deployments where id = ${id}`);
  await app.pool.query(sql.type(z.object({}))`update deployments set status = 'failed', finished_at = now() where id = ${id}`);
  const failed = await state();

  for (const [who, token] of [["the project's owner", owner.token], ["a team admin", admin.token]] as const) {
    const refused = await client(app.url, token).post(`/api/deployments/${id}/retry`);
    t.equal(refused.status, 403, `${who}: ${refused.text}`);
    t.match(refused.body, { code: "forbidden", message: /git connection/ });
  }
  t.same(await state(), failed, "nothing queued");

  const retried = await asMember.post(`/api/deployments/${id}/retry`);
  t.equal(retried.status, 202, retried.text);
  t.not((await state()).job_id, failed.job_id, "the connection's owner queues it again");
});
