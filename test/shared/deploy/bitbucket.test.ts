import t, { type Test } from "tap";
import type { BitbucketConfig } from "../../../shared/deploy/configs.ts";
import { DeployError } from "../../../shared/deploy/errors.ts";
import { deployBitbucket, testBitbucketConnection } from "../../../shared/deploy/git/bitbucket.ts";
import type { DeployFile } from "../../../shared/deploy/types.ts";
import { startBitbucketStandIn, type BitbucketStandIn } from "../../support/peers/bitbucketPeer.ts";
import { rebindingResolver, tableResolver } from "../../support/peers/resolvers.ts";
import { captureLog, expected, exposedText, generation } from "./fixtures.ts";

const network = { allowPrivate: true };

async function standIn(t: Test, files?: Record<string, string>): Promise<BitbucketStandIn> {
  const started = await startBitbucketStandIn(files ? { files } : {});
  t.teardown(() => started.close());
  return started;
}

const configOf = (s: BitbucketStandIn, overrides: Partial<BitbucketConfig> = {}): BitbucketConfig => ({
  workspace: s.workspace,
  repo: s.slug,
  branch: "main",
  username: s.username,
  app_password: s.appPassword,
  api_url: `${s.url}/2.0`,
  ...overrides,
});

async function deploy(s: BitbucketStandIn, files: DeployFile[], id: number | string = 41, overrides: Partial<BitbucketConfig> = {}) {
  const capture = captureLog();
  const outcome = await deployBitbucket({ deploymentId: id, files, config: configOf(s, overrides), log: capture.log, network }).then(
    (result) => ({ result, error: undefined }),
    (error: unknown) => ({ result: undefined, error }),
  );
  return { ...outcome, entries: capture.entries };
}

const headFiles = (s: BitbucketStandIn, branch = "schemaforge/deployment-41") => s.repo.filesOf(s.repo.branches.get(branch)!);

t.test("one commit with the generated files on a new branch, one pull request", async (t) => {
  const s = await standIn(t, {});
  // A file named like a form meta field must still arrive as a file.
  const files = [...generation("1"), { path: "message", content: Buffer.from("a file called message") }];
  const { result, error, entries } = await deploy(s, files);
  t.error(error);
  t.same(headFiles(s), expected(files), "the commit's tree equals the generation's files");
  const head = s.repo.commits.get(s.repo.branches.get("schemaforge/deployment-41")!)!;
  t.same(head.parents, [s.repo.branches.get("main")]);
  t.match(head.message, /SchemaForge-Deployment: 41/);
  t.equal(s.pulls.length, 1);
  t.match(s.pulls[0], { source: "schemaforge/deployment-41", destination: "main", state: "OPEN" });
  t.match(result, { provider: "bitbucket", commitSha: head.sha, pullRequestNumber: 1, pullRequestUrl: /pull-requests\/1$/, reusedCommit: false, reusedPullRequest: false });
  t.equal(entries.at(-1)?.type, "success");
  t.notMatch(exposedText(entries), s.appPassword);
});

t.test("files are added over the configured branch", async (t) => {
  const s = await standIn(t, { "README.md": "# site\n", "index.php": "old" });
  const files = generation("2");
  t.error((await deploy(s, files)).error);
  t.same(headFiles(s), expected([...files, { path: "README.md", content: Buffer.from("# site\n") }]));
});

t.test("a retry reuses the branch's commit and the open pull request", async (t) => {
  const s = await standIn(t, {});
  t.error((await deploy(s, generation("3"))).error);
  const head = s.repo.branches.get("schemaforge/deployment-41");
  const { result, error } = await deploy(s, generation("3"));
  t.error(error);
  t.match(result, { reusedCommit: true, reusedPullRequest: true, commitSha: head });
  t.equal(s.repo.branches.get("schemaforge/deployment-41"), head, "no new commit");
  t.equal(s.pulls.length, 1, "exactly one pull request");
});

t.test("a crash at any step: exactly one pull request", async (t) => {
  for (const [label, pattern, when] of [
    ["commit answer lost", /\/src$/, "after"],
    ["pull request refused before it was made", /\/pullrequests$/, "before"],
    ["pull request answer lost", /\/pullrequests$/, "after"],
  ] as const) {
    const s = await standIn(t, {});
    s.failOnce({ method: "POST", pattern, when });
    const first = await deploy(s, generation("4"), 77);
    if (first.error) t.type(first.error, DeployError, `${label}: the first attempt fails cleanly`);
    const retry = await deploy(s, generation("4"), 77);
    t.error(retry.error, `${label}: the retry succeeds`);
    t.equal(s.pulls.length, 1, `${label}: exactly one pull request`);
    t.equal(s.repo.commits.get(s.repo.branches.get("schemaforge/deployment-77")!)!.parents[0], s.repo.branches.get("main"), `${label}: one commit on the branch`);
    t.same(headFiles(s, "schemaforge/deployment-77"), expected(generation("4")));
  }
});

t.test("a wrong app password fails cleanly without showing it", async (t) => {
  const s = await standIn(t);
  const wrong = "ATBBWrongAppPassword-xyz";
  const { error, entries } = await deploy(s, generation("1"), 41, { app_password: wrong });
  t.match(error, { code: "auth_failed", retryable: false, message: /Bitbucket \(acme\/site\): the access token was rejected \(401 Unauthorized\)/ });
  t.notMatch(exposedText(entries, error), wrong);
  t.notMatch(exposedText(entries, error), Buffer.from(`${s.username}:${wrong}`).toString("base64"));
  const test = await testBitbucketConnection(configOf(s, { app_password: wrong }), { network });
  t.match(test, { ok: false, code: "auth_failed" });
});

t.test("private API hosts are refused unless allowed; connection test", async (t) => {
  const s = await standIn(t);
  const refused = await deployBitbucket({ deploymentId: 1, files: generation("1"), config: configOf(s), log: captureLog().log, network: { allowPrivate: false } }).catch((e: unknown) => e);
  t.match(refused, { code: "network_target_refused" });
  t.same(s.requests, []);
  t.match(await testBitbucketConnection(configOf(s), { network }), { ok: true, message: /Connected to acme\/site; branch main exists/ });
  t.match(await testBitbucketConnection(configOf(s, { branch: "gone" }), { network }), { ok: false, code: "not_found" });
});

t.test("the SDK's connections go through the guard, checked again at connect time", async (t) => {
  const s = await standIn(t, {});
  const port = new URL(s.url).port;
  // A name only the guard's resolver knows: reaching the stand-in proves the Bitbucket client used the guard.
  const routed = await deployBitbucket({
    deploymentId: 5,
    files: generation("5"),
    config: configOf(s, { api_url: `http://bitbucket.test:${port}/2.0` }),
    log: captureLog().log,
    network: { allowPrivate: true, resolver: tableResolver({ "bitbucket.test": ["127.0.0.1"] }) },
  });
  t.equal(routed.pullRequestNumber, 1);
  // DNS rebinding: the early check sees a public answer, the connection a loopback one.
  const rebinding = rebindingResolver("127.0.0.1");
  const before = s.requests.length;
  const refused = await deployBitbucket({ deploymentId: 6, files: generation("6"), config: configOf(s, { api_url: `http://rebind.test:${port}/2.0` }), log: captureLog().log, network: { allowPrivate: false, resolver: rebinding } }).catch(
    (e: unknown) => e,
  );
  t.match(refused, { code: "network_target_refused", message: /rebind\.test: it resolves to a loopback address/ });
  t.notMatch((refused as Error).message, /127\.0\.0\.1/, "not what the name resolves to");
  t.ok(rebinding.calls >= 2, "resolved again when connecting");
  t.equal(s.requests.length, before, "no request reached the stand-in");
});
