/**
 * Commit and push on GitHub (@octokit/rest): blobs and one tree over the branch head's tree
 * (or the default branch's when the branch is missing), one commit, the ref created or moved
 * forward (never forced). A tree equal to the head's means the files are there already.
 */
import { Octokit } from "@octokit/rest";
import { createGuardedFetch } from "../../net/guardedFetch.ts";
import { DeployError } from "../errors.ts";
import { collectFiles } from "../files.ts";
import { createRunLog, formatBytes, runLogged } from "../runLog.ts";
import { scrubberFor } from "../scrub.ts";
import { isOperationCommit, messageWithTrailer, splitRepository, type CommitRequest, type CommitResult, type PushRequest, type PushResult } from "./branchOps.ts";
import { gitFailure, statusOf } from "./gitCommon.ts";
import { findRef, writeTree } from "./github.ts";

const silent = { debug() {}, info() {}, warn() {}, error() {} };

function client(request: CommitRequest | PushRequest, fetchFn: typeof fetch) {
  return new Octokit({ auth: request.access.token, baseUrl: request.access.apiBase, userAgent: "schemaforge", log: silent, request: { fetch: fetchFn, signal: request.signal } });
}

/** One commit of the files on the branch. @throws DeployError */
export async function commitGithub(request: CommitRequest): Promise<CommitResult> {
  const scrubber = scrubberFor({ access_token: request.access.token });
  const runLog = createRunLog(request.log, scrubber);
  const guarded = createGuardedFetch(request.network, { origin: request.access.apiBase });
  const repo = splitRepository(request.repository);
  const call = async <T>(where: string, body: () => Promise<T>): Promise<T> => {
    try {
      return await body();
    } catch (error) {
      throw gitFailure(error, `GitHub ${where} (${request.repository})`, scrubber);
    }
  };
  try {
    return await runLogged(runLog, scrubber, "GitHub commit", request.signal, async () => {
      const octokit = client(request, guarded.fetch);
      const files = await collectFiles(request.files);
      const bytes = files.reduce((sum, f) => sum + f.content.length, 0);
      const head = await call(`read of branch ${request.branch}`, () => findRef(octokit, repo, request.branch));
      let createdFrom: string | null = null;
      let parent = head;
      if (!parent) {
        createdFrom = (await call("repository read", () => octokit.rest.repos.get(repo))).data.default_branch;
        parent = (await call(`read of branch ${createdFrom}`, () => octokit.rest.git.getRef({ ...repo, ref: `heads/${createdFrom}` }))).data.object.sha;
        await runLog.info(`Branch ${request.branch} does not exist; it will start from ${createdFrom} (${parent.slice(0, 12)}).`);
      }
      const parentCommit = (await call("read of the head commit", () => octokit.rest.git.getCommit({ ...repo, commit_sha: parent }))).data;
      await runLog.info(`Writing ${files.length} files (${formatBytes(bytes)}) over ${parent.slice(0, 12)}.`);
      const tree = await call("tree upload", () => writeTree(octokit, repo, parentCommit.tree.sha, files, runLog));
      const base = { provider: "github" as const, repository: request.repository, branch: request.branch, createdFrom, files: files.length, bytes };
      if (tree === parentCommit.tree.sha) {
        if (!head) await call(`creation of branch ${request.branch}`, () => octokit.rest.git.createRef({ ...repo, ref: `refs/heads/${request.branch}`, sha: parent }));
        const ours = isOperationCommit(parentCommit.message, request.operationId);
        const summary = ours
          ? `Branch ${request.branch} already holds this operation's commit ${parent.slice(0, 12)} (an earlier attempt made it); nothing was committed again.`
          : `Branch ${request.branch} already holds these files at ${parent.slice(0, 12)}; nothing to commit.`;
        await runLog.success(summary, { commit: parent, branch: request.branch });
        return { ...base, commitSha: parent, committed: false, summary };
      }
      const commit = (await call("commit", () => octokit.rest.git.createCommit({ ...repo, message: messageWithTrailer(request.message, request.operationId), tree, parents: [parent] }))).data.sha;
      if (head) {
        try {
          await octokit.rest.git.updateRef({ ...repo, ref: `heads/${request.branch}`, sha: commit, force: false });
        } catch (error) {
          if (statusOf(error) === 422) throw new DeployError("branch_conflict", `Branch ${request.branch} moved while the commit was made; run the commit again.`);
          throw gitFailure(error, `GitHub update of branch ${request.branch} (${request.repository})`, scrubber);
        }
      } else {
        await call(`creation of branch ${request.branch}`, () => octokit.rest.git.createRef({ ...repo, ref: `refs/heads/${request.branch}`, sha: commit }));
      }
      const summary = `Committed ${files.length} files as ${commit.slice(0, 12)} on ${request.repository}@${request.branch}${createdFrom ? ` (new branch from ${createdFrom})` : ""}.`;
      await runLog.success(summary, { commit, branch: request.branch });
      return { ...base, commitSha: commit, committed: true, summary };
    });
  } finally {
    await guarded.close();
  }
}

/** Points the branch at the commit: creates it, or moves it forward (never forced). @throws DeployError */
export async function pushGithub(request: PushRequest): Promise<PushResult> {
  const scrubber = scrubberFor({ access_token: request.access.token });
  const runLog = createRunLog(request.log, scrubber);
  const guarded = createGuardedFetch(request.network, { origin: request.access.apiBase });
  const repo = splitRepository(request.repository);
  try {
    return await runLogged(runLog, scrubber, "GitHub push", request.signal, async () => {
      const octokit = client(request, guarded.fetch);
      const base = { provider: "github" as const, repository: request.repository, branch: request.branch, commitSha: request.commitSha };
      const head = await findRef(octokit, repo, request.branch).catch((error: unknown) => Promise.reject(gitFailure(error, `GitHub read of branch ${request.branch}`, scrubber)));
      let change: PushResult["change"];
      if (head === request.commitSha) change = "unchanged";
      else if (!head) {
        await octokit.rest.git.createRef({ ...repo, ref: `refs/heads/${request.branch}`, sha: request.commitSha }).catch((error: unknown) => Promise.reject(gitFailure(error, `GitHub creation of branch ${request.branch}`, scrubber)));
        change = "created";
      } else {
        try {
          await octokit.rest.git.updateRef({ ...repo, ref: `heads/${request.branch}`, sha: request.commitSha, force: false });
        } catch (error) {
          if (statusOf(error) === 422) throw new DeployError("branch_conflict", `Branch ${request.branch} has commits that ${request.commitSha.slice(0, 12)} does not; it was not moved (a push never overwrites a branch).`);
          throw gitFailure(error, `GitHub update of branch ${request.branch}`, scrubber);
        }
        change = "fast_forward";
      }
      const summary = change === "unchanged" ? `Branch ${request.branch} already points at ${request.commitSha.slice(0, 12)}.` : `Branch ${request.branch} ${change === "created" ? "created" : "moved forward"} at ${request.commitSha.slice(0, 12)}.`;
      await runLog.success(summary, { commit: request.commitSha, branch: request.branch, change });
      return { ...base, change, summary };
    });
  } finally {
    await guarded.close();
  }
}
