/**
 * Commit and push without a pull request, against the git host stand-ins through the real
 * SDKs: through signed-in connections (GitHub, GitLab) and an environment's app password
 * (Bitbucket). A missing branch starts from the default branch; the same files again make no
 * second commit; a push creates a branch at the generation's commit and moves GitHub's main
 * forward, and refuses to overwrite a branch; logs like a deployment; validation and who may.
 * (A worker killed mid-commit: commitCrash.test.ts.)
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildEnvironment, buildGeneration, waitForDeployment } from "../../support/deploymentFactories.ts";
import { buildProject, buildUserWithToken, projectStateRefusals, setProjectState } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { startBitbucketStandIn } from "../../support/peers/bitbucketPeer.ts";
import { startGithubStandIn } from "../../support/peers/githubPeer.ts";
import { startGitlabStandIn } from "../../support/peers/gitlabPeer.ts";

const files = { "src/index.ts": "export const answer = 42;\n", "README.generated.md": "generated\n" };

t.test("commit and push", async (t) => {
  const gh = await startGithubStandIn();
  const gl = await startGitlabStandIn();
  const bb = await startBitbucketStandIn();
  t.teardown(() => Promise.all([gh.close(), gl.close(), bb.close()]));
  const app = await startTestApp(t, {
    worker: true,
    env: {
      GITHUB_CLIENT_ID: gh.oauth.clientId,
      GITHUB_CLIENT_SECRET: gh.oauth.clientSecret,
      GITHUB_OAUTH_BASE: gh.url,
      GITHUB_API_BASE: gh.url,
      GITLAB_CLIENT_ID: gl.oauth.clientId,
      GITLAB_CLIENT_SECRET: gl.oauth.clientSecret,
      GITLAB_URL: gl.url,
    },
  });
  const { user, token } = await buildUserWithToken(app.pool);
  const viewer = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = await buildProject(app.pool, user.id);
  const generation = await buildGeneration(app.pool, project, user.id, files);
  const connect = async (provider: string) => {
    const started = await api.get(`/api/git/${provider}/authorize`);
    const back = new URL((await fetch(started.body.authorization_url, { redirect: "manual" })).headers.get("location")!);
    const done = await api.get(`/api/git/${provider}/callback?code=${back.searchParams.get("code")}&state=${back.searchParams.get("state")}`);
    if (done.status !== 201) throw new Error(done.text);
    return done.body.connection.id as number;
  };
  const run = async (path: "commit" | "push", body: Record<string, unknown>) => {
    const res = await api.post(`/api/projects/${project}/git/${path}`, body);
    if (res.status !== 202) throw new Error(`${path}: ${res.status} ${res.text}`);
    t.match(res.body.deployment, { operation: path, status: "pending", deployment_method: "git" });
    return waitForDeployment(app.url, token, res.body.deployment.id, 30_000).catch(async (error: unknown) => {
      const logs = (await api.get(`/api/deployments/${res.body.deployment.id}/logs`)).body.logs.map((l: { message: string }) => l.message);
      throw new Error(`${(error as Error).message}; log: ${logs.join(" | ")}`);
    });
  };
  const github = await connect("github");
  const gitlab = await connect("gitlab");

  await t.test("GitHub through a connection: a new branch from main, then nothing twice", async (t) => {
    const main = gh.repo.branches.get("main")!;
    const done = await run("commit", { code_generation_id: generation, connection_id: github, repository: "acme/site", branch: "generated", message: "Generated code\n\nFrom SchemaForge." });
    t.equal(done.status, "succeeded", done.error);
    t.match(done, { target_environment: null, git_target: { provider: "github", repository: "acme/site", branch: "generated", connection_id: github } });
    t.match(done.result, { committed: true, createdFrom: "main", files: 2 });
    const head = gh.repo.branches.get("generated")!;
    t.equal(done.result.commitSha, head);
    t.same(gh.repo.commits.get(head)!.parents, [main], "one commit on top of main");
    t.match(gh.repo.commits.get(head)!.message, /^Generated code\n\nFrom SchemaForge\.\n\nSchemaForge-Operation: \d+\n$/);
    t.same(gh.repo.filesOf(head), { "README.generated.md": "generated\n", "README.md": "# site\n", "src/index.ts": files["src/index.ts"] });
    t.equal(gh.pulls.length, 0, "no pull request");
    const logs = (await api.get(`/api/deployments/${done.id}/logs`)).body.logs.map((l: { message: string }) => l.message);
    t.match(logs, [/^Commit #\d+ to acme\/site@generated on github started/, /does not exist; it will start from main/, /Writing 2 files/, /^Committed 2 files as [0-9a-f]{12}/]);

    const again = await run("commit", { code_generation_id: generation, connection_id: github, repository: "acme/site", branch: "generated", message: "Again" });
    t.equal(again.status, "succeeded");
    t.match(again.result, { committed: false, commitSha: head, summary: /already holds these files/ });
    t.equal(gh.repo.branches.get("generated"), head, "no second commit");
  });

  await t.test("GitHub push: a new branch, main moved forward, a diverged branch refused", async (t) => {
    const head = gh.repo.branches.get("generated")!;
    const release = await run("push", { code_generation_id: generation, connection_id: github, repository: "acme/site", branch: "release" });
    t.match(release, { status: "succeeded", result: { change: "created", commitSha: head } });
    t.equal(gh.repo.branches.get("release"), head);
    const main = await run("push", { code_generation_id: generation, connection_id: github, repository: "acme/site", branch: "main" });
    t.match(main, { status: "succeeded", result: { change: "fast_forward" } });
    t.equal(gh.repo.branches.get("main"), head);
    gh.repo.branches.set("diverged", gh.repo.commitChanges(gh.repo.branches.get("main")!, [{ path: "other.txt", content: Buffer.from("x") }], "other\n"));
    const diverged = await run("push", { code_generation_id: generation, connection_id: github, repository: "acme/site", branch: "diverged" });
    t.match(diverged, { status: "failed", error_code: "branch_conflict", error: /has commits that [0-9a-f]{12} does not/ });
    const never = await api.post(`/api/projects/${project}/git/push`, { code_generation_id: generation, connection_id: github, repository: "acme/other", branch: "x" });
    t.match(never.body, { code: "validation_failed", errors: { code_generation_id: [/has no commit in acme\/other yet/] } });
  });

  await t.test("GitLab through a connection: commit on a new branch, push creates another", async (t) => {
    const done = await run("commit", { code_generation_id: generation, connection_id: gitlab, repository: "acme/site", branch: "generated", message: "Generated" });
    t.equal(done.status, "succeeded", done.error);
    const head = gl.repo.branches.get("generated")!;
    t.same(gl.repo.commits.get(head)!.parents, [gl.repo.branches.get("main")]);
    t.same(gl.repo.filesOf(head), { "README.generated.md": "generated\n", "README.md": "# site\n", "src/index.ts": files["src/index.ts"] });
    const again = await run("commit", { code_generation_id: generation, connection_id: gitlab, repository: "acme/site", branch: "generated", message: "Generated" });
    t.match(again.result, { committed: false, commitSha: head });
    t.equal(gl.repo.branches.get("generated"), head, "the same blobs: no second commit");
    const pushed = await run("push", { code_generation_id: generation, connection_id: gitlab, repository: "acme/site", branch: "release" });
    t.match(pushed, { status: "succeeded", result: { change: "created" } });
    t.equal(gl.repo.branches.get("release"), head);
    const refused = await run("push", { code_generation_id: generation, connection_id: gitlab, repository: "acme/site", branch: "main" });
    t.match(refused, { status: "failed", error_code: "branch_conflict" });
  });

  await t.test("Bitbucket through an environment's app password", async (t) => {
    const env = await buildEnvironment(app.url, token, project, {
      name: "Bitbucket",
      git_config: { workspace: bb.workspace, repo: bb.slug, branch: "main", username: bb.username, app_password: bb.appPassword, api_url: `${bb.url}/2.0` },
    });
    const done = await run("commit", { code_generation_id: generation, environment_id: env, branch: "generated", message: "Generated" });
    t.equal(done.status, "succeeded", done.error);
    t.match(done, { environment_id: env, target_environment: "production", git_target: { repository: "acme/site" } });
    const head = bb.repo.branches.get("generated")!;
    t.same(bb.repo.filesOf(head), { "README.generated.md": "generated\n", "README.md": "# site\n", "src/index.ts": files["src/index.ts"] });
    const again = await run("commit", { code_generation_id: generation, environment_id: env, branch: "generated", message: "Generated" });
    t.equal(again.status, "succeeded");
    t.equal(bb.repo.commits.get(bb.repo.branches.get("generated")!)!.parents[0], head, "Bitbucket has no tree compare: a new operation is a new commit on top");
    const pushed = await run("push", { code_generation_id: generation, environment_id: env, branch: "release" });
    t.match(pushed, { status: "succeeded", result: { change: "created" } });
  });

  await t.test("validation and who may", async (t) => {
    const post = (body: Record<string, unknown>, as = api) => as.post(`/api/projects/${project}/git/commit`, body);
    const base = { code_generation_id: generation, connection_id: github, repository: "acme/site", branch: "x", message: "m" };
    t.match((await post({ ...base, connection_id: undefined })).body.errors, { connection_id: [/one of them/] });
    t.match((await post({ ...base, repository: undefined })).body.errors, { repository: [/required with a connection id/] });
    t.match((await post({ ...base, repository: "no-slash" })).body.errors, { repository: [/owner\/name/] });
    t.match((await post({ ...base, branch: "bad..name" })).body.errors, { branch: [/valid branch name/] });
    t.match((await post({ ...base, message: "" })).body.errors, { message: [/./] });
    const other = await buildUserWithToken(app.pool);
    t.match((await post({ ...base, connection_id: github }, client(app.url, other.token))).status, 404, "a stranger does not see the project");
    t.equal((await post(base, client(app.url, viewer.token))).status, 404);
    const othersProject = await buildProject(app.pool, other.user.id);
    const foreign = await client(app.url, other.token).post(`/api/projects/${othersProject}/git/commit`, { ...base, code_generation_id: await buildGeneration(app.pool, othersProject, other.user.id, files) });
    t.match(foreign.body.errors, { connection_id: ["You have no git connection with this id."] }, "someone else's connection cannot be used");
    t.match((await post({ ...base, code_generation_id: 999999 })).body.errors, { code_generation_id: [/no such code generation/] });
  });

  await t.test("a locked, expired or archived project neither commits nor pushes, and records no deployment", async (t) => {
    const deployments = () => app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from deployments where project_id = ${project}`);
    const before = await deployments();
    const body = { code_generation_id: generation, connection_id: github, repository: "acme/site", branch: "shelved" };
    for (const { state, status, code } of projectStateRefusals) {
      await setProjectState(app.pool, project, state);
      for (const [path, extra] of [["commit", { message: "m" }], ["push", {}]] as const) {
        const res = await api.post(`/api/projects/${project}/git/${path}`, { ...body, ...extra });
        t.match({ status: res.status, code: res.body?.code }, { status, code }, `${state}: ${path}`);
      }
    }
    t.equal(await deployments(), before, "no deployment recorded");
    await setProjectState(app.pool, project, "normal");
  });
});
