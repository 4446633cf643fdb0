import t, { type Test } from "tap";
import type { GithubConfig } from "../../../shared/deploy/configs.ts";
import { DeployError } from "../../../shared/deploy/errors.ts";
import { deployGithub, testGithubConnection } from "../../../shared/deploy/git/github.ts";
import type { DeployFile } from "../../../shared/deploy/types.ts";
import { startGithubStandIn, type GithubStandIn } from "../../support/peers/githubPeer.ts";
import { rebindingResolver, tableResolver } from "../../support/peers/resolvers.ts";
import { captureLog, expected, exposedText, generation } from "./fixtures.ts";

const network = { allowPrivate: true };

async function standIn(t: Test, files?: Record<string, string>): Promise<GithubStandIn> {
  const started = await startGithubStandIn(files ? { files } : {});
  t.teardown(() => started.close());
  return started;
}

const configOf = (s: GithubStandIn, overrides: Partial<GithubConfig> = {}): GithubConfig => ({
  owner: s.owner,
  repo: s.name,
  branch: "main",
  access_token: s.token,
  api_url: s.url,
  ...overrides,
});

async function deploy(s: GithubStandIn, files: DeployFile[], id: number | string = 41, overrides: Partial<GithubConfig> = {}) {
  const capture = captureLog();
  const outcome = await deployGithub({ deploymentId: id, files, config: configOf(s, overrides), log: capture.log, network }).then(
    (result) => ({ result, error: undefined }),
    (error: unknown) => ({ result: undefined, error }),
  );
  return { ...outcome, entries: capture.entries };
}

t.test("one commit with the generated files on a new branch, one pull request", async (t) => {
  const s = await standIn(t, {});
  const files = generation("1");
  const { result, error, entries } = await deploy(s, files);
  t.error(error);
  const head = s.repo.branches.get("schemaforge/deployment-41")!;
  t.same(s.repo.filesOf(head), expected(files), "the commit's tree equals the generation's files");
  t.same(s.repo.commits.get(head)!.parents, [s.repo.branches.get("main")], "branched from the configured branch");
  t.match(s.repo.commits.get(head)!.message, /SchemaForge-Deployment: 41/);
  t.equal(s.pulls.length, 1);
  t.match(s.pulls[0], { head: "schemaforge/deployment-41", base: "main", state: "open", title: "SchemaForge deployment 41" });
  t.match(result, { provider: "github", commitSha: head, pullRequestNumber: 1, pullRequestUrl: /\/pull\/1$/, reusedCommit: false, reusedPullRequest: false });
  t.ok(s.requests.includes("POST /repos/acme/site/git/blobs"), "the binary file went as a blob");
  t.equal(entries.at(-1)?.type, "success");
  t.notMatch(exposedText(entries), s.token);
});

t.test("files are added over the configured branch's tree", async (t) => {
  const s = await standIn(t, { "README.md": "# site\n", "index.php": "old" });
  const files = generation("2");
  t.error((await deploy(s, files)).error);
  t.same(s.repo.filesOf(s.repo.branches.get("schemaforge/deployment-41")!), expected([...files, { path: "README.md", content: Buffer.from("# site\n") }]));
});

t.test("a retry reuses the branch's commit and the open pull request", async (t) => {
  const s = await standIn(t, {});
  const files = generation("3");
  t.error((await deploy(s, files)).error);
  const head = s.repo.branches.get("schemaforge/deployment-41");
  const { result, error, entries } = await deploy(s, files);
  t.error(error);
  t.match(result, { reusedCommit: true, reusedPullRequest: true, commitSha: head });
  t.equal(s.repo.branches.get("schemaforge/deployment-41"), head, "no new commit");
  t.equal(s.pulls.length, 1, "exactly one pull request");
  t.ok(entries.some((e) => /Reusing the open pull request #1/.test(e.message)));
});

t.test("a crash after the host applied a step: the retry opens no second pull request", async (t) => {
  for (const [label, method, pattern] of [
    ["branch created, answer lost", "POST", /\/git\/refs$/],
    ["pull request opened, answer lost", "POST", /\/pulls$/],
  ] as const) {
    const s = await standIn(t, {});
    s.failOnce({ method, pattern, when: "after" });
    const first = await deploy(s, generation("4"), 77);
    t.type(first.error, DeployError, `${label}: the first attempt fails`);
    t.equal(first.entries.at(-1)?.type, "error");
    const retry = await deploy(s, generation("4"), 77);
    t.error(retry.error, `${label}: the retry succeeds`);
    t.equal(s.pulls.length, 1, `${label}: exactly one pull request`);
    t.same(s.repo.filesOf(s.repo.branches.get("schemaforge/deployment-77")!), expected(generation("4")));
  }
});

t.test("a wrong token fails cleanly without showing it", async (t) => {
  const s = await standIn(t);
  const wrong = "ghp_WrongToken_abcdefghijklmnop";
  const { error, entries } = await deploy(s, generation("1"), 41, { access_token: wrong });
  t.match(error, { code: "auth_failed", retryable: false, message: /GitHub read of branch main \(acme\/site\): the access token was rejected \(401/ });
  t.match(entries.at(-1), { type: "error", metadata: { code: "auth_failed" } });
  t.notMatch(exposedText(entries, error), wrong);
  t.equal(s.pulls.length, 0);
  const test = await testGithubConnection(configOf(s, { access_token: wrong }), { network });
  t.match(test, { ok: false, code: "auth_failed" });
  t.notMatch(test.message, wrong);
});

t.test("private API hosts are refused unless allowed; connection test", async (t) => {
  const s = await standIn(t);
  const refused = await deployGithub({ deploymentId: 1, files: generation("1"), config: configOf(s), log: captureLog().log, network: { allowPrivate: false } }).catch((e: unknown) => e);
  t.match(refused, { code: "network_target_refused" });
  t.same(s.requests, [], "the stand-in saw no request");
  t.match(await testGithubConnection(configOf(s), { network }), { ok: true, message: /Connected to acme\/site; branch main exists/ });
  t.match(await testGithubConnection(configOf(s, { branch: "nope" }), { network }), { ok: false, code: "not_found" });
});

t.test("the SDK's connections go through the guard, checked again at connect time", async (t) => {
  const s = await standIn(t, {});
  const port = new URL(s.url).port;
  // A name only the guard's resolver knows: reaching the stand-in proves Octokit used the guard.
  const routed = await deployGithub({
    deploymentId: 5,
    files: generation("5"),
    config: configOf(s, { api_url: `http://github.test:${port}` }),
    log: captureLog().log,
    network: { allowPrivate: true, resolver: tableResolver({ "github.test": ["127.0.0.1"] }) },
  });
  t.equal(routed.pullRequestNumber, 1);
  // DNS rebinding: the early check sees a public answer, the connection a loopback one.
  const rebinding = rebindingResolver("127.0.0.1");
  const before = s.requests.length;
  const refused = await deployGithub({ deploymentId: 6, files: generation("6"), config: configOf(s, { api_url: `http://rebind.test:${port}` }), log: captureLog().log, network: { allowPrivate: false, resolver: rebinding } }).catch(
    (e: unknown) => e,
  );
  t.match(refused, { code: "network_target_refused", message: /rebind\.test: it resolves to a loopback address/ });
  t.notMatch((refused as Error).message, /127\.0\.0\.1/, "not what the name resolves to");
  t.ok(rebinding.calls >= 2, "resolved again when connecting");
  t.equal(s.requests.length, before, "no request reached the stand-in");
});
