/**
 * Commit and push on Bitbucket Cloud (REST 2.0 through the guarded fetch): one commit by
 * multipart upload to `/src` on the branch (created from the main branch when missing); a
 * branch head carrying the operation's trailer means an earlier attempt committed already.
 * A push creates the branch at the commit; an existing branch elsewhere is refused.
 */
import { createGuardedFetch } from "../../net/guardedFetch.ts";
import { DeployError } from "../errors.ts";
import { collectFiles } from "../files.ts";
import { createRunLog, formatBytes, runLogged } from "../runLog.ts";
import { scrubberFor, type Scrubber } from "../scrub.ts";
import { isOperationCommit, messageWithTrailer, splitRepository, type CommitRequest, type CommitResult, type GitAccess, type PushRequest, type PushResult } from "./branchOps.ts";
import { commitForm } from "./bitbucket.ts";
import { gitFailure, httpFailure } from "./gitCommon.ts";

/** Requests to one repository; null for an allowed 404. */
function repositoryClient(access: GitAccess, repository: string, fetchFn: typeof fetch, scrubber: Scrubber, signal?: AbortSignal) {
  const { owner, repo } = splitRepository(repository);
  const base = `${access.apiBase.replace(/\/+$/, "")}/repositories/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}`;
  const authorization = access.kind === "app_password" ? `Basic ${Buffer.from(`${access.username ?? ""}:${access.token}`).toString("base64")}` : `Bearer ${access.token}`;
  const where = `Bitbucket (${repository})`;
  return async <T>(method: string, path: string, body?: FormData | Record<string, unknown>, allowMissing = false): Promise<T | null> => {
    let response: Response;
    try {
      response = await fetchFn(`${base}${path}`, {
        method,
        headers: { authorization, accept: "application/json", ...(body && !(body instanceof FormData) ? { "content-type": "application/json" } : {}) },
        body: body instanceof FormData ? body : body ? JSON.stringify(body) : undefined,
        signal: signal ?? null,
      });
    } catch (error) {
      throw gitFailure(error, where, scrubber);
    }
    const text = await response.text();
    const json: unknown = text ? JSON.parse(text) : null;
    if (response.status === 404 && allowMissing) return null;
    if (!response.ok) throw httpFailure(response.status, (json as { error?: { message?: string } } | null)?.error?.message ?? response.statusText, where, scrubber);
    return json as T;
  };
}

type Branch = { target: { hash: string; message?: string } };
const branchPath = (branch: string) => `/refs/branches/${encodeURIComponent(branch)}`;

/** One commit of the files on the branch. @throws DeployError */
export async function commitBitbucket(request: CommitRequest): Promise<CommitResult> {
  const scrubber = scrubberFor({ access_token: request.access.token, username: request.access.username ?? "" });
  const runLog = createRunLog(request.log, scrubber);
  const guarded = createGuardedFetch(request.network, { origin: request.access.apiBase });
  try {
    return await runLogged(runLog, scrubber, "Bitbucket commit", request.signal, async () => {
      const send = repositoryClient(request.access, request.repository, guarded.fetch, scrubber, request.signal);
      const files = await collectFiles(request.files);
      const bytes = files.reduce((sum, f) => sum + f.content.length, 0);
      const head = await send<Branch>("GET", branchPath(request.branch), undefined, true);
      let createdFrom: string | null = null;
      let parent = head?.target.hash;
      if (!parent) {
        createdFrom = (await send<{ mainbranch: { name: string } }>("GET", ""))!.mainbranch.name;
        parent = (await send<Branch>("GET", branchPath(createdFrom)))!.target.hash;
        await runLog.info(`Branch ${request.branch} does not exist; it will start from ${createdFrom}.`);
      }
      const base = { provider: "bitbucket" as const, repository: request.repository, branch: request.branch, createdFrom, files: files.length, bytes };
      if (head && isOperationCommit(head.target.message, request.operationId)) {
        const summary = `Branch ${request.branch} already holds this operation's commit ${head.target.hash.slice(0, 12)} (an earlier attempt made it); nothing was committed again.`;
        await runLog.success(summary, { commit: head.target.hash, branch: request.branch });
        return { ...base, commitSha: head.target.hash, committed: false, summary };
      }
      await runLog.info(`Committing ${files.length} files (${formatBytes(bytes)}) over ${parent.slice(0, 12)}.`);
      try {
        await send("POST", "/src", commitForm(files, request.branch, parent, messageWithTrailer(request.message, request.operationId)));
      } catch (error) {
        const now = await send<Branch>("GET", branchPath(request.branch), undefined, true);
        if (!isOperationCommit(now?.target.message, request.operationId)) throw error;
      }
      const after = await send<Branch>("GET", branchPath(request.branch), undefined, true);
      if (!after) throw new DeployError("remote_error", `Bitbucket accepted the commit but branch ${request.branch} does not exist.`);
      const summary = `Committed ${files.length} files as ${after.target.hash.slice(0, 12)} on ${request.repository}@${request.branch}${createdFrom ? ` (new branch from ${createdFrom})` : ""}.`;
      await runLog.success(summary, { commit: after.target.hash, branch: request.branch });
      return { ...base, commitSha: after.target.hash, committed: true, summary };
    });
  } finally {
    await guarded.close();
  }
}

/** Creates the branch at the commit (or finds it there). @throws DeployError */
export async function pushBitbucket(request: PushRequest): Promise<PushResult> {
  const scrubber = scrubberFor({ access_token: request.access.token, username: request.access.username ?? "" });
  const runLog = createRunLog(request.log, scrubber);
  const guarded = createGuardedFetch(request.network, { origin: request.access.apiBase });
  try {
    return await runLogged(runLog, scrubber, "Bitbucket push", request.signal, async () => {
      const send = repositoryClient(request.access, request.repository, guarded.fetch, scrubber, request.signal);
      const head = await send<Branch>("GET", branchPath(request.branch), undefined, true);
      if (head && head.target.hash !== request.commitSha) {
        throw new DeployError("branch_conflict", `Branch ${request.branch} exists at ${head.target.hash.slice(0, 12)}; a push only creates branches here, so push to a new branch or delete this one first.`);
      }
      if (!head) await send("POST", "/refs/branches", { name: request.branch, target: { hash: request.commitSha } });
      const change = head ? ("unchanged" as const) : ("created" as const);
      const summary = head ? `Branch ${request.branch} already points at ${request.commitSha.slice(0, 12)}.` : `Branch ${request.branch} created at ${request.commitSha.slice(0, 12)}.`;
      await runLog.success(summary, { commit: request.commitSha, branch: request.branch, change });
      return { provider: "bitbucket", repository: request.repository, branch: request.branch, commitSha: request.commitSha, change, summary };
    });
  } finally {
    await guarded.close();
  }
}
