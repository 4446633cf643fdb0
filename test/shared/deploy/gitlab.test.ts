import t, { type Test } from "tap";
import type { GitlabConfig } from "../../../shared/deploy/configs.ts";
import { DeployError } from "../../../shared/deploy/errors.ts";
import { deployGitlab, testGitlabConnection } from "../../../shared/deploy/git/gitlab.ts";
import type { DeployFile } from "../../../shared/deploy/types.ts";
import { startGitlabStandIn, type GitlabStandIn } from "../../support/peers/gitlabPeer.ts";
import { rebindingResolver, tableResolver } from "../../support/peers/resolvers.ts";
import { captureLog, expected, exposedText, generation } from "./fixtures.ts";

const network = { allowPrivate: true };

async function standIn(t: Test, files?: Record<string, string>): Promise<GitlabStandIn> {
  const started = await startGitlabStandIn(files ? { files } : {});
  t.teardown(() => started.close());
  return started;
}

const configOf = (s: GitlabStandIn, overrides: Partial<GitlabConfig> = {}): GitlabConfig => ({
  project_id: s.projectId,
  branch: "main",
  access_token: s.token,
  gitlab_url: s.url,
  ...overrides,
});

async function deploy(s: GitlabStandIn, files: DeployFile[], id: number | string = 41, overrides: Partial<GitlabConfig> = {}) {
  const capture = captureLog();
  const outcome = await deployGitlab({ deploymentId: id, files, config: configOf(s, overrides), log: capture.log, network }).then(
    (result) => ({ result, error: undefined }),
    (error: unknown) => ({ result: undefined, error }),
  );
  return { ...outcome, entries: capture.entries };
}

const headFiles = (s: GitlabStandIn, branch = "schemaforge/deployment-41") => s.repo.filesOf(s.repo.branches.get(branch)!);

t.test("one commit with the generated files on a new branch, one merge request", async (t) => {
  const s = await standIn(t, {});
  const files = generation("1");
  const { result, error, entries } = await deploy(s, files);
  t.error(error);
  t.same(headFiles(s), expected(files), "the commit's tree equals the generation's files");
  const head = s.repo.commits.get(s.repo.branches.get("schemaforge/deployment-41")!)!;
  t.same(head.parents, [s.repo.branches.get("main")], "branched from the configured branch");
  t.equal(s.mergeRequests.length, 1);
  t.match(s.mergeRequests[0], { source_branch: "schemaforge/deployment-41", target_branch: "main", state: "opened" });
  t.match(result, { provider: "gitlab", commitSha: head.sha, pullRequestNumber: 1, pullRequestUrl: /merge_requests\/1$/, reusedCommit: false, reusedPullRequest: false });
  t.equal(entries.at(-1)?.type, "success");
  t.notMatch(exposedText(entries), s.token);
});

t.test("existing files are updated, others created, across paginated listings", async (t) => {
  const base: Record<string, string> = {};
  for (let i = 0; i < 150; i += 1) base[`lib/file${i}.txt`] = `base ${i}`;
  base["index.php"] = "old index";
  const s = await standIn(t, base);
  const files = [...generation("2"), { path: "lib/file149.txt", content: Buffer.from("replaced") }];
  t.error((await deploy(s, files)).error);
  const merged = { ...base, ...expected(files) };
  t.same(headFiles(s), Object.fromEntries(Object.entries(merged).sort(([a], [b]) => a.localeCompare(b))));
  t.ok(s.requests.filter((r) => r.endsWith("/repository/tree")).length >= 2, "the listing followed the next page");
});

t.test("a retry reuses the branch's commit and the open merge request", async (t) => {
  const s = await standIn(t, {});
  t.error((await deploy(s, generation("3"))).error);
  const head = s.repo.branches.get("schemaforge/deployment-41");
  const { result, error } = await deploy(s, generation("3"));
  t.error(error);
  t.match(result, { reusedCommit: true, reusedPullRequest: true, commitSha: head });
  t.equal(s.repo.branches.get("schemaforge/deployment-41"), head, "no new commit");
  t.equal(s.mergeRequests.length, 1, "exactly one merge request");
});

t.test("a crash at any step: the retry reuses what exists, exactly one merge request", async (t) => {
  // The commit's answer is lost: the same attempt finds its commit on the branch and goes on.
  const lost = await standIn(t, {});
  lost.failOnce({ method: "POST", pattern: /\/repository\/commits$/, when: "after" });
  const recovered = await deploy(lost, generation("4"), 77);
  t.error(recovered.error, "commit answer lost: recovered within the attempt");
  t.equal(lost.mergeRequests.length, 1);

  for (const [label, when, reused] of [
    ["merge request refused before it was made", "before", { reusedCommit: true, reusedPullRequest: false }],
    ["merge request opened, answer lost", "after", { reusedCommit: true, reusedPullRequest: true }],
  ] as const) {
    const s = await standIn(t, {});
    s.failOnce({ method: "POST", pattern: /\/merge_requests$/, when });
    const first = await deploy(s, generation("4"), 77);
    t.type(first.error, DeployError, `${label}: the first attempt fails`);
    const retry = await deploy(s, generation("4"), 77);
    t.error(retry.error, `${label}: the retry succeeds`);
    t.match(retry.result, reused, `${label}: the retry reuses the commit${reused.reusedPullRequest ? " and the merge request" : ""}`);
    t.equal(s.mergeRequests.length, 1, `${label}: exactly one merge request`);
    t.equal(s.repo.commits.get(s.repo.branches.get("schemaforge/deployment-77")!)!.parents[0], s.repo.branches.get("main"), `${label}: one commit on the branch`);
    t.same(headFiles(s, "schemaforge/deployment-77"), expected(generation("4")));
  }
});

t.test("a wrong token fails cleanly without showing it", async (t) => {
  const s = await standIn(t);
  const wrong = "glpat-WrongToken-abcdefghij";
  const { error, entries } = await deploy(s, generation("1"), 41, { access_token: wrong });
  t.match(error, { code: "auth_failed", retryable: false, message: /GitLab read of branch main \(project 42\): the access token was rejected/ });
  t.notMatch(exposedText(entries, error), wrong);
  const test = await testGitlabConnection(configOf(s, { access_token: wrong }), { network });
  t.match(test, { ok: false, code: "auth_failed" });
  t.notMatch(test.message, wrong);
});

t.test("a self-hosted URL on a private address is refused unless allowed; connection test", async (t) => {
  const s = await standIn(t);
  const refused = await deployGitlab({ deploymentId: 1, files: generation("1"), config: configOf(s), log: captureLog().log, network: { allowPrivate: false } }).catch((e: unknown) => e);
  t.match(refused, { code: "network_target_refused" });
  t.same(s.requests, []);
  t.match(await testGitlabConnection(configOf(s), { network }), { ok: true, message: /Connected to acme\/site; branch main exists/ });
  t.match(await testGitlabConnection(configOf(s, { branch: "missing" }), { network }), { ok: false, code: "not_found" });
});

t.test("the SDK's connections go through the guard, checked again at connect time", async (t) => {
  const s = await standIn(t, {});
  const port = new URL(s.url).port;
  // A name only the guard's resolver knows: reaching the stand-in proves Gitbeaker used the guard.
  const routed = await deployGitlab({
    deploymentId: 5,
    files: generation("5"),
    config: configOf(s, { gitlab_url: `http://gitlab.test:${port}` }),
    log: captureLog().log,
    network: { allowPrivate: true, resolver: tableResolver({ "gitlab.test": ["127.0.0.1"] }) },
  });
  t.equal(routed.pullRequestNumber, 1);
  // DNS rebinding: the early check sees a public answer, the connection a loopback one.
  const rebinding = rebindingResolver("127.0.0.1");
  const before = s.requests.length;
  const refused = await deployGitlab({ deploymentId: 6, files: generation("6"), config: configOf(s, { gitlab_url: `http://rebind.test:${port}` }), log: captureLog().log, network: { allowPrivate: false, resolver: rebinding } }).catch(
    (e: unknown) => e,
  );
  t.match(refused, { code: "network_target_refused", message: /rebind\.test: it resolves to a loopback address/ });
  t.notMatch((refused as Error).message, /127\.0\.0\.1/, "not what the name resolves to");
  t.ok(rebinding.calls >= 2, "resolved again when connecting");
  t.equal(s.requests.length, before, "no request reached the stand-in");
});
