/**
 * The GitHub deployer (@octokit/rest): blobs and one tree over the configured branch's tree,
 * one commit whose parent is that branch's head, the deployment's branch pointing at it, and
 * a pull request against the configured branch.
 *
 * Retries: the tree's sha depends only on its content, so a retry computes the same tree and
 * reuses the branch's commit when its tree matches; the open pull request for the branch is
 * looked up before one is created (and again if creating reports that one exists).
 */
import { Octokit } from "@octokit/rest";
import { createGuardedFetch } from "../../net/guardedFetch.ts";
import { githubConfigSchema, parseConfig, type GithubConfig } from "../configs.ts";
import { DeployError } from "../errors.ts";
import { collectFiles, safeId } from "../files.ts";
import { runPool } from "../pool.ts";
import { createRunLog, formatBytes, runLogged, type RunLog } from "../runLog.ts";
import { scrubberFor } from "../scrub.ts";
import type { ConnectionTestResult, Deployer, DeployFile, DeployRequest, TestConnectionOptions } from "../types.ts";
import { checkApiUrl, commitMessage, deploymentBranch, gitFailure, pinnedTo, pullRequestText, statusOf, type GitDeployResult } from "./gitCommon.ts";

const DEFAULT_API = "https://api.github.com";
const silent = { debug() {}, info() {}, warn() {}, error() {} };

/** Files under this size that are valid UTF-8 go inline in the tree request; others as blobs. */
const INLINE_LIMIT = 64 * 1024;

/** Deploys to GitHub; see the module comment. @throws DeployError */
export async function deployGithub(request: DeployRequest<GithubConfig>): Promise<GitDeployResult> {
  const scrubber = scrubberFor(request.config);
  const runLog = createRunLog(request.log, scrubber);
  const guarded = createGuardedFetch(request.network, pinnedTo((request.config as Partial<GithubConfig> | null)?.api_url, DEFAULT_API));
  try {
    return await runLogged(runLog, scrubber, "GitHub deployment", request.signal, async () => {
      const config = parseConfig(githubConfigSchema, request.config);
      const id = safeId(request.deploymentId);
      const branch = deploymentBranch(id);
      const repoName = `${config.owner}/${config.repo}`;
      const apiUrl = config.api_url ?? DEFAULT_API;
      await checkApiUrl(apiUrl, request.network);
      const octokit = new Octokit({ auth: config.access_token, baseUrl: apiUrl, userAgent: "schemaforge-deployer", log: silent, request: { fetch: guarded.fetch, signal: request.signal } });
      const repo = { owner: config.owner, repo: config.repo };
      const call = async <T>(where: string, body: () => Promise<T>): Promise<T> => {
        try {
          return await body();
        } catch (error) {
          throw gitFailure(error, `GitHub ${where} (${repoName})`, scrubber);
        }
      };

      const files = await collectFiles(request.files);
      const bytes = files.reduce((sum, f) => sum + f.content.length, 0);
      await runLog.info(`Preparing one commit of ${files.length} files (${formatBytes(bytes)}) for ${repoName}, branch ${branch} from ${config.branch}.`);
      const baseSha = (await call(`read of branch ${config.branch}`, () => octokit.rest.git.getRef({ ...repo, ref: `heads/${config.branch}` }))).data.object.sha;
      const baseTree = (await call("read of the base commit", () => octokit.rest.git.getCommit({ ...repo, commit_sha: baseSha }))).data.tree.sha;
      const tree = await call("tree upload", () => writeTree(octokit, repo, baseTree, files, runLog));

      const existing = await call(`read of branch ${branch}`, () => findRef(octokit, repo, branch));
      const existingCommit = existing ? (await call("read of the branch head", () => octokit.rest.git.getCommit({ ...repo, commit_sha: existing }))).data : undefined;
      let commitSha: string;
      const reusedCommit = existingCommit?.tree.sha === tree;
      if (reusedCommit) {
        commitSha = existing!;
        await runLog.info(`Branch ${branch} already holds this commit (${commitSha.slice(0, 12)}) from an earlier attempt; reusing it.`);
      } else {
        commitSha = (await call("commit", () => octokit.rest.git.createCommit({ ...repo, message: commitMessage(id, files.length), tree, parents: [baseSha] }))).data.sha;
        await call(`update of branch ${branch}`, () => pointBranch(octokit, repo, branch, commitSha, existing !== undefined));
        await runLog.info(`Committed ${commitSha.slice(0, 12)} to ${existing ? "the existing" : "new"} branch ${branch}.`, { commit: commitSha, branch });
      }

      const found = await call("pull request lookup", () => findPull(octokit, repo, branch, config.branch));
      const pull = found ?? (await openPull(octokit, repo, branch, config.branch, pullRequestText(id, files.length, config.branch), (error) => gitFailure(error, `GitHub pull request (${repoName})`, scrubber)));
      await runLog.info(`${found ? "Reusing the open" : "Opened"} pull request #${pull.number}: ${pull.html_url}`, { pull_request: pull.number, url: pull.html_url });
      const result: GitDeployResult = {
        provider: "github",
        summary: `Committed ${files.length} files to ${repoName}@${branch}; pull request #${pull.number} against ${config.branch}.`,
        files: files.length,
        bytes,
        branch,
        baseBranch: config.branch,
        commitSha,
        pullRequestNumber: pull.number,
        pullRequestUrl: pull.html_url,
        reusedCommit,
        reusedPullRequest: Boolean(found),
      };
      await runLog.success(result.summary, { branch, commit: commitSha, pull_request: pull.number, url: pull.html_url });
      return result;
    });
  } finally {
    await guarded.close();
  }
}

/** A repository by owner and name. */
export type Repo = { owner: string; repo: string };

/** Writes blobs for binary and large files and one tree over `baseTree`; returns its sha (also for commits without a pull request). */
export async function writeTree(octokit: Octokit, repo: Repo, baseTree: string, files: DeployFile[], runLog: RunLog): Promise<string> {
  const entries: Array<{ path: string; mode: "100644"; type: "blob"; sha?: string; content?: string }> = [];
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const blobs: DeployFile[] = [];
  for (const file of files) {
    let text: string | undefined;
    try {
      text = file.content.length <= INLINE_LIMIT ? decoder.decode(file.content) : undefined;
    } catch {
      text = undefined;
    }
    if (text === undefined) blobs.push(file);
    else entries.push({ path: file.path, mode: "100644", type: "blob", content: text });
  }
  await runPool(blobs, 4, async (file) => {
    const { data } = await octokit.rest.git.createBlob({ ...repo, content: file.content.toString("base64"), encoding: "base64" });
    entries.push({ path: file.path, mode: "100644", type: "blob", sha: data.sha });
  });
  if (blobs.length) await runLog.info(`Uploaded ${blobs.length} binary or large file(s) as blobs.`);
  const { data } = await octokit.rest.git.createTree({ ...repo, base_tree: baseTree, tree: entries });
  return data.sha;
}

/** The sha a branch points to, or undefined when it does not exist. */
export async function findRef(octokit: Octokit, repo: Repo, branch: string): Promise<string | undefined> {
  try {
    return (await octokit.rest.git.getRef({ ...repo, ref: `heads/${branch}` })).data.object.sha;
  } catch (error) {
    if (statusOf(error) === 404) return undefined;
    throw error;
  }
}

/** Creates the branch, or moves it when it exists (it is this deployment's own branch). */
async function pointBranch(octokit: Octokit, repo: Repo, branch: string, sha: string, exists: boolean): Promise<void> {
  if (!exists) {
    try {
      await octokit.rest.git.createRef({ ...repo, ref: `refs/heads/${branch}`, sha });
      return;
    } catch (error) {
      if (statusOf(error) !== 422) throw error;
    }
  }
  await octokit.rest.git.updateRef({ ...repo, ref: `heads/${branch}`, sha, force: true });
}

/** The parts of a pull request the deployer reports. */
type Pull = { number: number; html_url: string };

/** The open pull request from `branch` into `base`, if any. */
async function findPull(octokit: Octokit, repo: Repo, branch: string, base: string): Promise<Pull | undefined> {
  const { data } = await octokit.rest.pulls.list({ ...repo, head: `${repo.owner}:${branch}`, base, state: "open", per_page: 10 });
  return data[0] && { number: data[0].number, html_url: data[0].html_url };
}

/** Opens the pull request; if the host says one exists (another attempt won), returns that one. */
async function openPull(octokit: Octokit, repo: Repo, branch: string, base: string, text: { title: string; body: string }, fail: (error: unknown) => Error): Promise<Pull> {
  try {
    const { data } = await octokit.rest.pulls.create({ ...repo, head: branch, base, title: text.title, body: text.body });
    return { number: data.number, html_url: data.html_url };
  } catch (error) {
    if (statusOf(error) !== 422) throw fail(error);
    const existing = await findPull(octokit, repo, branch, base).catch((lookup: unknown) => Promise.reject(fail(lookup)));
    if (!existing) throw fail(error);
    return existing;
  }
}

/** Checks token, repository and branch; reports, never throws. */
export async function testGithubConnection(raw: GithubConfig, options: TestConnectionOptions): Promise<ConnectionTestResult> {
  const scrubber = scrubberFor(raw);
  const guarded = createGuardedFetch(options.network, pinnedTo((raw as Partial<GithubConfig> | null)?.api_url, DEFAULT_API));
  try {
    const config = parseConfig(githubConfigSchema, raw);
    const apiUrl = config.api_url ?? DEFAULT_API;
    await checkApiUrl(apiUrl, options.network);
    const octokit = new Octokit({ auth: config.access_token, baseUrl: apiUrl, userAgent: "schemaforge-deployer", log: silent, request: { fetch: guarded.fetch } });
    const { data } = await octokit.rest.repos.get({ owner: config.owner, repo: config.repo });
    await octokit.rest.git.getRef({ owner: config.owner, repo: config.repo, ref: `heads/${config.branch}` });
    const push = (data.permissions as { push?: boolean } | undefined)?.push;
    return { ok: true, message: `Connected to ${data.full_name}; branch ${config.branch} exists${push === false ? ", but the token may not push" : ""}.` };
  } catch (error) {
    const failure = error instanceof DeployError ? error : gitFailure(error, `GitHub (${raw.owner}/${raw.repo})`, scrubber);
    return { ok: false, code: failure.code, message: scrubber.text(failure.message) };
  } finally {
    await guarded.close();
  }
}

/** The GitHub deployer. */
export const githubDeployer: Deployer<GithubConfig, GitDeployResult> = { deploy: deployGithub, testConnection: testGithubConnection };
