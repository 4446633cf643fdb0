/**
 * A commit message may not carry the service's own trailer (`SchemaForge-Operation: <id>`):
 * Bitbucket finds an operation's commit by that line, so a message naming the next operation's
 * id would make that operation (another member's, on the same branch) report this commit as its
 * own without committing, and a push of its generation would then send this one's content.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildEnvironment, buildGeneration, waitForDeployment } from "../../support/deploymentFactories.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { startBitbucketStandIn } from "../../support/peers/bitbucketPeer.ts";

t.test("a message with the service's trailer is refused; the next operation commits its own files", async (t) => {
  const bb = await startBitbucketStandIn();
  t.teardown(() => bb.close());
  const app = await startTestApp(t, { worker: true });
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = await buildProject(app.pool, user.id);
  const mine = await buildGeneration(app.pool, project, user.id, { "a.txt": "planted\n" });
  const theirs = await buildGeneration(app.pool, project, user.id, { "a.txt": "theirs\n" });
  const env = await buildEnvironment(app.url, token, project, {
    git_config: { workspace: bb.workspace, repo: bb.slug, branch: "main", username: bb.username, app_password: bb.appPassword, api_url: `${bb.url}/2.0` },
  });
  const next = (await app.pool.oneFirst(sql.type(z.object({ id: z.number() }))`select coalesce(max(id), 0)::int as id from deployments`)) + 2;

  const forged = await api.post(`/api/projects/${project}/git/commit`, {
    code_generation_id: mine, environment_id: env, branch: "shared", message: `Looks harmless\n\nSchemaForge-Operation: ${next}`,
  });
  t.equal(forged.status, 422, forged.text);
  t.match(forged.body.errors, { message: [/SchemaForge-Operation/] });
  if (forged.status === 202) await waitForDeployment(app.url, token, forged.body.deployment.id, 30_000);
  else await app.pool.query(sql.type(z.object({}))`select setval(pg_get_serial_sequence('deployments', 'id'), ${next - 1})`);

  const res = await api.post(`/api/projects/${project}/git/commit`, { code_generation_id: theirs, environment_id: env, branch: "shared", message: "Theirs" });
  t.equal(res.status, 202, res.text);
  t.equal(res.body.deployment.id, next);
  const done = await waitForDeployment(app.url, token, next, 30_000);
  t.match(done, { status: "succeeded", result: { committed: true } }, "its own commit, not one that claimed its id");
  t.same(bb.repo.filesOf(done.result.commitSha)["a.txt"], "theirs\n");
});
