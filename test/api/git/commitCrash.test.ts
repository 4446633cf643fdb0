/**
 * A worker killed mid-commit: GitHub has moved the branch to the new commit but the worker
 * dies before it hears so (a proxy holds the answer, then the process gets SIGKILL). Another
 * worker retries the job, computes the same tree, finds it at the branch head and commits
 * nothing again: the branch holds one commit.
 */
import t from "tap";
import { startTestApp } from "../../support/app.ts";
import { buildEnvironment, buildGeneration, waitForDeployment } from "../../support/deploymentFactories.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { startGithubStandIn } from "../../support/peers/githubPeer.ts";
import { holdingProxy } from "../../support/peers/holdingProxy.ts";
import { spawnReady } from "../../support/processes.ts";

const files = { "src/index.ts": "export const answer = 42;\n", "README.generated.md": "generated\n" };

t.test("a worker killed after GitHub moved the branch: the retry commits nothing twice", async (t) => {
  const gh = await startGithubStandIn();
  t.teardown(() => gh.close());
  const app = await startTestApp(t, { worker: false });
  const { user, token } = await buildUserWithToken(app.pool);
  const project = await buildProject(app.pool, user.id);
  const proxy = await holdingProxy(t, gh.url, /^PATCH \/repos\/acme\/site\/git\/refs\/heads(\/|%2F)work$/);
  const env = await buildEnvironment(app.url, token, project, { name: "GitHub", git_config: { owner: gh.owner, repo: gh.name, branch: "main", access_token: gh.token, api_url: proxy.url } });
  gh.repo.branches.set("work", gh.repo.branches.get("main")!);
  const before = gh.repo.branches.get("work")!;
  const generation = await buildGeneration(app.pool, project, user.id, files);
  const workerEnv = { DATABASE_URL: app.db.url };
  const first = await spawnReady(t, "test/support/workerProcess.ts", workerEnv);
  const res = await client(app.url, token).post(`/api/projects/${project}/git/commit`, { code_generation_id: generation, environment_id: env, branch: "work", message: "Work" });
  t.equal(res.status, 202, res.text);
  await proxy.heldRequest;
  const moved = gh.repo.branches.get("work")!;
  t.not(moved, before, "the host moved the branch");
  await first.kill("SIGKILL");
  await spawnReady(t, "test/support/workerProcess.ts", workerEnv);
  const done = await waitForDeployment(app.url, token, res.body.deployment.id, 90_000);
  t.equal(done.status, "succeeded", done.error);
  t.match(done.result, { committed: false, commitSha: moved, summary: /already holds this operation's commit/ });
  t.equal(gh.repo.branches.get("work"), moved, "the branch holds the one commit");
  t.same(gh.repo.commits.get(moved)!.parents, [before], "one commit on top of where it was");
  t.ok(done.attempts >= 2, `${done.attempts} attempts`);
});
