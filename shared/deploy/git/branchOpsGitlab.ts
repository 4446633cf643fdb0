/**
 * Commit and push on GitLab (@gitbeaker/rest): the branch's files are listed with their blob
 * ids, only files whose content differs become commit actions (create or update), and one
 * commit lands through the commits API (which creates a missing branch from the default one).
 * Nothing differing means the files are there already. A push creates the branch at the
 * commit; GitLab's REST API cannot move an existing branch, so that is refused.
 */
import { Gitlab } from "@gitbeaker/rest";
import { GuardedDispatcher } from "../../net/guardedDispatcher.ts";
import { DeployError } from "../errors.ts";
import { collectFiles } from "../files.ts";
import { createRunLog, formatBytes, runLogged } from "../runLog.ts";
import { scrubberFor } from "../scrub.ts";
import { blobSha, isOperationCommit, messageWithTrailer, type CommitRequest, type CommitResult, type PushRequest, type PushResult } from "./branchOps.ts";
import { gitFailure, statusOf } from "./gitCommon.ts";

function client(request: CommitRequest | PushRequest, dispatcher: GuardedDispatcher) {
  const auth = request.access.kind === "oauth" ? { oauthToken: request.access.token } : { token: request.access.token };
  return new Gitlab({ host: request.access.apiBase.replace(/\/+$/, ""), ...auth, agent: dispatcher as never, queryTimeout: 60_000 });
}
type Api = ReturnType<typeof client>;

/** A numeric project id, or the project's path. */
const projectOf = (repository: string) => (/^\d+$/.test(repository) ? Number(repository) : repository);

async function branchHead(api: Api, project: string | number, branch: string): Promise<{ id: string; message: string } | undefined> {
  try {
    const found = await api.Branches.show(project, branch);
    return { id: found.commit.id, message: found.commit.message ?? "" };
  } catch (error) {
    if (statusOf(error) === 404) return undefined;
    throw error;
  }
}

/** One commit of the files that differ from the branch. @throws DeployError */
export async function commitGitlab(request: CommitRequest): Promise<CommitResult> {
  const scrubber = scrubberFor({ access_token: request.access.token });
  const runLog = createRunLog(request.log, scrubber);
  // Pinned to the instance: a redirect elsewhere would take PRIVATE-TOKEN along (pinnedTo in gitCommon.ts).
  const dispatcher = new GuardedDispatcher(request.network, { origin: request.access.apiBase });
  const project = projectOf(request.repository);
  const call = async <T>(where: string, body: () => Promise<T>): Promise<T> => {
    try {
      return await body();
    } catch (error) {
      throw gitFailure(error, `GitLab ${where} (${request.repository})`, scrubber);
    }
  };
  try {
    return await runLogged(runLog, scrubber, "GitLab commit", request.signal, async () => {
      const api = client(request, dispatcher);
      const files = await collectFiles(request.files);
      const bytes = files.reduce((sum, f) => sum + f.content.length, 0);
      const head = await call(`read of branch ${request.branch}`, () => branchHead(api, project, request.branch));
      let createdFrom: string | null = null;
      if (!head) {
        createdFrom = String((await call("project read", () => api.Projects.show(project))).default_branch);
        await runLog.info(`Branch ${request.branch} does not exist; it will start from ${createdFrom}.`);
      }
      const ref = head ? request.branch : createdFrom!;
      const items = (await call(`listing of ${ref}`, () => api.Repositories.allRepositoryTrees(project, { ref, recursive: true, perPage: 100, pagination: "offset" } as never))) as Array<{ type: string; path: string; id: string }>;
      const present = new Map(items.filter((item) => item.type === "blob").map((item) => [item.path, item.id]));
      const actions = files
        .filter((file) => present.get(file.path) !== blobSha(file.content))
        .map((file) => ({ action: present.has(file.path) ? ("update" as const) : ("create" as const), filePath: file.path, content: file.content.toString("base64"), encoding: "base64" as const }));
      const base = { provider: "gitlab" as const, repository: request.repository, branch: request.branch, createdFrom, files: files.length, bytes };
      if (actions.length === 0) {
        let at = head;
        if (!at) {
          const created = await call(`creation of branch ${request.branch}`, () => api.Branches.create(project, request.branch, createdFrom!));
          at = { id: created.commit.id, message: created.commit.message ?? "" };
        }
        const summary = isOperationCommit(at.message, request.operationId)
          ? `Branch ${request.branch} already holds this operation's commit ${at.id.slice(0, 12)} (an earlier attempt made it); nothing was committed again.`
          : `Branch ${request.branch} already holds these files at ${at.id.slice(0, 12)}; nothing to commit.`;
        await runLog.success(summary, { commit: at.id, branch: request.branch });
        return { ...base, commitSha: at.id, committed: false, summary };
      }
      await runLog.info(`Committing ${actions.length} of ${files.length} files (${formatBytes(bytes)}) that differ from ${ref}.`);
      let sha: string;
      try {
        sha = (await api.Commits.create(project, request.branch, messageWithTrailer(request.message, request.operationId), actions, head ? {} : { startBranch: createdFrom! })).id;
      } catch (error) {
        // A lost answer of an earlier request: the branch may hold our commit now.
        const now = await call(`read of branch ${request.branch}`, () => branchHead(api, project, request.branch));
        if (!now || !isOperationCommit(now.message, request.operationId)) throw gitFailure(error, `GitLab commit (${request.repository})`, scrubber);
        sha = now.id;
      }
      const summary = `Committed ${actions.length} changed of ${files.length} files as ${sha.slice(0, 12)} on ${request.repository}@${request.branch}${createdFrom ? ` (new branch from ${createdFrom})` : ""}.`;
      await runLog.success(summary, { commit: sha, branch: request.branch });
      return { ...base, commitSha: sha, committed: true, summary };
    });
  } finally {
    await dispatcher.close();
  }
}

/** Creates the branch at the commit (or finds it there). @throws DeployError */
export async function pushGitlab(request: PushRequest): Promise<PushResult> {
  const scrubber = scrubberFor({ access_token: request.access.token });
  const runLog = createRunLog(request.log, scrubber);
  // Pinned to the instance: a redirect elsewhere would take PRIVATE-TOKEN along (pinnedTo in gitCommon.ts).
  const dispatcher = new GuardedDispatcher(request.network, { origin: request.access.apiBase });
  const project = projectOf(request.repository);
  try {
    return await runLogged(runLog, scrubber, "GitLab push", request.signal, async () => {
      const api = client(request, dispatcher);
      const head = await branchHead(api, project, request.branch).catch((error: unknown) => Promise.reject(gitFailure(error, `GitLab read of branch ${request.branch}`, scrubber)));
      const base = { provider: "gitlab" as const, repository: request.repository, branch: request.branch, commitSha: request.commitSha };
      if (head && head.id !== request.commitSha) {
        throw new DeployError("branch_conflict", `Branch ${request.branch} exists at ${head.id.slice(0, 12)}; GitLab's API cannot move a branch, so push to a new branch or delete this one first.`);
      }
      if (!head) await api.Branches.create(project, request.branch, request.commitSha).catch((error: unknown) => Promise.reject(gitFailure(error, `GitLab creation of branch ${request.branch}`, scrubber)));
      const change = head ? ("unchanged" as const) : ("created" as const);
      const summary = head ? `Branch ${request.branch} already points at ${request.commitSha.slice(0, 12)}.` : `Branch ${request.branch} created at ${request.commitSha.slice(0, 12)}.`;
      await runLog.success(summary, { commit: request.commitSha, branch: request.branch, change });
      return { ...base, change, summary };
    });
  } finally {
    await dispatcher.close();
  }
}
