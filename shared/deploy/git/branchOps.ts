/**
 * Commit and push without a pull request (`POST /projects/{p}/git/commit|push`): one commit
 * of a generation's files on a branch, created from the repository's default branch when it
 * is missing; and pointing another branch at such a commit. Shared types and the trailer
 * that marks our commits; each host's implementation is in branchOps<Host>.ts.
 *
 * Retries never commit twice: GitHub compares trees (content-addressed, so a retry computes
 * the same tree and finds it at the branch head), GitLab compares the files' blob hashes with
 * the branch (nothing differs after an earlier attempt landed), Bitbucket looks for the
 * operation's trailer on the branch head.
 */
import { createHash } from "node:crypto";
import type { NetworkPolicy } from "../../net/networkGuard.ts";
import type { DeployFiles, DeployLog } from "../types.ts";

/** How to reach a repository's host. */
export interface GitAccess {
  provider: "github" | "gitlab" | "bitbucket";
  /** REST API base (GitHub and Bitbucket API host; the GitLab instance). */
  apiBase: string;
  /** An OAuth access token, or a personal token (GitHub, GitLab). */
  token: string;
  /** `oauth`: a signed-in connection's token; `personal`: a pasted token; `app_password`: Bitbucket's, with `username`. */
  kind: "oauth" | "personal" | "app_password";
  username?: string;
}

/** What a commit needs. */
export interface CommitRequest {
  access: GitAccess;
  /** `owner/name` (GitLab: the project path, or its numeric id). */
  repository: string;
  branch: string;
  message: string;
  /** The operation's id, in the trailer. */
  operationId: number;
  files: DeployFiles;
  log: DeployLog;
  signal?: AbortSignal;
  network: NetworkPolicy;
}

/** The outcome of a commit (the deployment's `result`). */
export interface CommitResult {
  provider: GitAccess["provider"];
  repository: string;
  branch: string;
  /** The commit at the branch head afterwards. */
  commitSha: string;
  /** False when the branch already held these files (an earlier attempt, or nothing changed). */
  committed: boolean;
  /** The default branch the branch was created from, when it was missing. */
  createdFrom: string | null;
  files: number;
  bytes: number;
  summary: string;
}

/** What a push needs. */
export interface PushRequest {
  access: GitAccess;
  repository: string;
  branch: string;
  commitSha: string;
  log: DeployLog;
  signal?: AbortSignal;
  network: NetworkPolicy;
}

/** The outcome of a push. */
export interface PushResult {
  provider: GitAccess["provider"];
  repository: string;
  branch: string;
  commitSha: string;
  /** How the branch got there: created, fast-forwarded, or already there. */
  change: "created" | "fast_forward" | "unchanged";
  summary: string;
}

/** The trailer line of operation `id`'s commits. */
export const operationTrailer = (id: number) => `SchemaForge-Operation: ${id}`;

/** The user's message with the trailer. */
export const messageWithTrailer = (message: string, id: number) => `${message.trimEnd()}\n\n${operationTrailer(id)}\n`;

/** Whether a commit message carries operation `id`'s trailer. */
export const isOperationCommit = (message: string | undefined, id: number) => Boolean(message?.split("\n").some((line) => line.trim() === operationTrailer(id)));

/** The git blob id of `content` (what `git hash-object` prints). */
export const blobSha = (content: Buffer) => createHash("sha1").update(`blob ${content.length}\0`).update(content).digest("hex");

/** `owner/name` → its two parts. */
export function splitRepository(repository: string): { owner: string; repo: string } {
  const slash = repository.indexOf("/");
  return { owner: repository.slice(0, slash), repo: repository.slice(slash + 1) };
}
