/**
 * One run per environment holds for commits and pushes through an environment too, under
 * concurrency: of several commits (and a deployment's execute) sent at once to one
 * environment, exactly one is queued and the others get 409 `deployment_in_progress`.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildEnvironment, buildGeneration } from "../../support/deploymentFactories.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";

t.test("concurrent commits and an execute to one environment: one is queued", async (t) => {
  // No worker: what is queued stays queued, so the environment stays busy.
  const app = await startTestApp(t);
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = await buildProject(app.pool, user.id);
  const generation = await buildGeneration(app.pool, project, user.id, { "index.ts": "export {};\n" });
  const env = await buildEnvironment(app.url, token, project, {
    git_config: { owner: "acme", repo: "site", branch: "main", access_token: "ghp_Example0123456789", api_url: "http://127.0.0.1:9" },
  });
  const busy = () =>
    app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      select count(*)::int as n from deployments where environment_id = ${env} and status = 'pending' and job_id is not null`);

  for (let round = 0; round < 3; round += 1) {
    const created = await api.post("/api/deployments", { environment_id: env, code_generation_id: generation });
    t.equal(created.status, 201, created.text);
    const answers = await Promise.all([
      ...Array.from({ length: 4 }, (_, i) =>
        api.post(`/api/projects/${project}/git/commit`, { code_generation_id: generation, environment_id: env, branch: `b${round}-${i}`, message: "m" }),
      ),
      api.post(`/api/deployments/${created.body.deployment.id}/execute`),
    ]);
    const statuses = answers.map((res) => res.status);
    t.equal(statuses.filter((s) => s === 202).length, 1, `round ${round}: one queued (${statuses.join(", ")})`);
    t.ok(
      answers.filter((res) => res.status !== 202).every((res) => res.status === 409 && res.body.code === "deployment_in_progress"),
      `round ${round}: the others are 409 deployment_in_progress`,
    );
    t.equal(await busy(), 1, `round ${round}: one run queued for the environment`);
    // Free the environment for the next round.
    await app.pool.query(sql.type(z.object({}))`update deployments set status = 'failed', finished_at = now() where environment_id = ${env} and status = 'pending' and job_id is not null`);
  }
});
