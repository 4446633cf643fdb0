/**
 * A commit or push through an environment goes to the environment's repository: its token
 * (or the git connection it names) was configured by a manager of the project for that
 * repository, and a member who may only deploy cannot point it at another one the token
 * happens to reach. Naming the environment's own repository is fine; another is 422 and
 * records nothing. A retry checks again when it runs: after the environment was moved to
 * another repository, an earlier commit to the old one fails instead of using the new access.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp, type TestApp } from "../../support/app.ts";
import { buildEnvironment, buildGeneration, waitForDeployment } from "../../support/deploymentFactories.ts";
import { buildProject, buildTeam, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { startGithubStandIn } from "../../support/peers/githubPeer.ts";

const MEMBER = 3;

/** An owner's project with a generation, shared with a member who may deploy through a team. */
async function memberWorld(app: TestApp) {
  const owner = await buildUserWithToken(app.pool);
  const member = await buildUserWithToken(app.pool);
  const project = await buildProject(app.pool, owner.user.id);
  await buildTeam(app.pool, owner.user.id, { [member.user.id]: MEMBER }, [project]);
  const generation = await buildGeneration(app.pool, project, owner.user.id, { "index.ts": "export {};\n" });
  return { owner, member, project, generation };
}

t.test("a commit or push through an environment stays in the environment's repository", async (t) => {
  const gh = await startGithubStandIn();
  t.teardown(() => gh.close());
  const app = await startTestApp(t, { worker: true });

  await t.test("a member cannot name another repository", async (t) => {
    const { owner, member, project, generation } = await memberWorld(app);
    // The owner's token reaches acme/site too, but the environment is for acme/docs.
    const env = await buildEnvironment(app.url, owner.token, project, {
      git_config: { owner: "acme", repo: "docs", branch: "main", access_token: gh.token, api_url: gh.url },
    });
    const api = client(app.url, member.token);
    const deployments = () => app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from deployments where project_id = ${project}`);

    for (const [path, extra] of [["commit", { message: "m" }], ["push", {}]] as const) {
      const res = await api.post(`/api/projects/${project}/git/${path}`, { code_generation_id: generation, environment_id: env, repository: "acme/site", branch: "x", ...extra });
      t.equal(res.status, 422, `${path}: ${res.text}`);
      t.match(res.body, { code: "validation_failed", errors: { repository: [/environment's repository \(acme\/docs\)/] } }, path);
    }
    t.equal(await deployments(), 0, "nothing recorded or queued");

    const same = await api.post(`/api/projects/${project}/git/commit`, { code_generation_id: generation, environment_id: env, repository: "ACME/docs", branch: "x", message: "m" });
    t.equal(same.status, 202, same.text);
    t.match(same.body.deployment, { operation: "commit", git_target: { repository: "acme/docs" } }, "the environment's own repository, as configured");
  });

  await t.test("a retry after the environment moved to another repository fails, and commits nothing", async (t) => {
    const { owner, member, project, generation } = await memberWorld(app);
    const env = await buildEnvironment(app.url, owner.token, project, {
      git_config: { owner: "acme", repo: "site", branch: "main", access_token: "ghp_Revoked0123456789", api_url: gh.url },
    });
    const api = client(app.url, member.token);
    const res = await api.post(`/api/projects/${project}/git/commit`, { code_generation_id: generation, environment_id: env, branch: "moved", message: "m" });
    t.equal(res.status, 202, res.text);
    const failed = await waitForDeployment(app.url, member.token, res.body.deployment.id, 30_000);
    t.match(failed, { status: "failed", error_code: "auth_failed" }, "the first token was refused");
    // The owner moves the environment to another repository, with a token that works.
    const moved = await client(app.url, owner.token).put(`/api/environments/${env}`, {
      git_config: { owner: "acme", repo: "docs", branch: "main", access_token: gh.token, api_url: gh.url },
    });
    t.equal(moved.status, 200, moved.text);
    const retried = await api.post(`/api/deployments/${failed.id}/retry`);
    t.equal(retried.status, 202, retried.text);
    const done = await waitForDeployment(app.url, member.token, failed.id, 30_000);
    t.match(done, { status: "failed", error_code: "invalid_config", error: /now goes to acme\/docs/ });
    t.notOk(gh.repo.branches.has("moved"), "nothing committed to acme/site with the new token");
  });
});
