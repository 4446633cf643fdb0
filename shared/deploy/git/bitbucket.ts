/**
 * The Bitbucket Cloud deployer, over its REST API 2.0 with the guarded fetch (there is no
 * maintained SDK): one commit by multipart upload to `/src`, which creates the deployment's
 * branch from the configured branch's head in the same request, then a pull request.
 *
 * File fields are named by path with a leading `/`, which keeps a file called `message` or
 * `branch` apart from the form's meta fields. Retries: a branch whose head commit carries
 * the deployment's trailer already holds the commit; the open pull request for the branch
 * is looked up (with the API's `q` filter) before one is created, and again if creating fails.
 */
import { createGuardedFetch } from "../../net/guardedFetch.ts";
import { bitbucketConfigSchema, parseConfig, type BitbucketConfig } from "../configs.ts";
import { DeployError } from "../errors.ts";
import { collectFiles, safeId } from "../files.ts";
import { createRunLog, formatBytes, runLogged } from "../runLog.ts";
import { scrubberFor, type Scrubber } from "../scrub.ts";
import type { ConnectionTestResult, Deployer, DeployFile, DeployRequest, TestConnectionOptions } from "../types.ts";
import { checkApiUrl, commitMessage, deploymentBranch, gitFailure, httpFailure, isDeploymentCommit, pinnedTo, pullRequestText, type GitDeployResult } from "./gitCommon.ts";

const DEFAULT_API = "https://api.bitbucket.org/2.0";

/** The parts of Bitbucket's JSON the deployer reads. */
interface BranchJson {
  target: { hash: string; message?: string };
}
interface PullJson {
  id: number;
  links: { html: { href: string } };
}
interface ErrorJson {
  error?: { message?: string };
}
type Json = Record<string, unknown>;

/** A small client for one repository's endpoints. */
function bitbucketClient(
  config: { workspace: string; repo: string; username?: string | undefined; app_password?: string | undefined; access_token?: string | undefined; token_type?: string | undefined; api_url?: string | undefined },
  fetchFn: typeof fetch,
  scrubber: Scrubber,
  signal?: AbortSignal,
) {
  const base = `${(config.api_url ?? DEFAULT_API).replace(/\/+$/, "")}/repositories/${encodeURIComponent(config.workspace)}/${encodeURIComponent(config.repo)}`;
  // A connection's OAuth token is a Bearer token; an app password goes with its username.
  const authorization =
    config.token_type === "oauth" ? `Bearer ${config.access_token ?? ""}` : `Basic ${Buffer.from(`${config.username ?? ""}:${config.app_password ?? ""}`).toString("base64")}`;
  const where = `Bitbucket (${config.workspace}/${config.repo})`;
  /** Sends a request; answers the parsed JSON, the response for 201/204, null for an allowed 404. */
  const send = async (method: string, path: string, body?: Json | FormData, allowMissing = false): Promise<unknown> => {
    let response: Response;
    try {
      response = await fetchFn(`${base}${path}`, {
        method,
        headers: { authorization, accept: "application/json", ...(body && !(body instanceof FormData) ? { "content-type": "application/json" } : {}) },
        body: body instanceof FormData ? body : body ? JSON.stringify(body) : undefined,
        signal,
      });
    } catch (error) {
      throw gitFailure(error, where, scrubber);
    }
    const text = await response.text();
    const json: unknown = text ? JSON.parse(text) : null;
    if (response.status === 404 && allowMissing) return null;
    if (!response.ok) throw httpFailure(response.status, (json as ErrorJson | null)?.error?.message ?? response.statusText, where, scrubber);
    return json;
  };
  return {
    /** GET, parsed as T; null for a 404 when `allowMissing`. */
    get: <T>(path: string, allowMissing = false) => send("GET", path, undefined, allowMissing) as Promise<T | null>,
    post: <T>(path: string, body: Json | FormData) => send("POST", path, body) as Promise<T | null>,
  };
}

type Client = ReturnType<typeof bitbucketClient>;

/** Deploys to Bitbucket; see the module comment. @throws DeployError */
export async function deployBitbucket(request: DeployRequest<BitbucketConfig>): Promise<GitDeployResult> {
  const scrubber = scrubberFor(request.config);
  const runLog = createRunLog(request.log, scrubber);
  const guarded = createGuardedFetch(request.network, pinnedTo((request.config as Partial<BitbucketConfig> | null)?.api_url, DEFAULT_API));
  try {
    return await runLogged(runLog, scrubber, "Bitbucket deployment", request.signal, async () => {
      const config = parseConfig(bitbucketConfigSchema, request.config);
      const id = safeId(request.deploymentId);
      const branch = deploymentBranch(id);
      const name = `${config.workspace}/${config.repo}`;
      await checkApiUrl(config.api_url ?? DEFAULT_API, request.network);
      const api = bitbucketClient(config, guarded.fetch, scrubber, request.signal);

      const files = await collectFiles(request.files);
      const bytes = files.reduce((sum, f) => sum + f.content.length, 0);
      await runLog.info(`Preparing one commit of ${files.length} files (${formatBytes(bytes)}) for ${name}, branch ${branch} from ${config.branch}.`);
      const baseHead = (await api.get<BranchJson>(branchPath(config.branch)))!.target.hash;
      let head = await findHead(api, branch);
      const reusedCommit = isDeploymentCommit(head?.message, id);
      if (reusedCommit) {
        await runLog.info(`Branch ${branch} already holds this deployment's commit (${head!.hash.slice(0, 12)}); reusing it.`);
      } else {
        try {
          await api.post("/src", commitForm(files, branch, head?.hash ?? baseHead, commitMessage(id, files.length)));
        } catch (error) {
          // The answer may have been lost after the commit was made: look before failing.
          if (!isDeploymentCommit((await findHead(api, branch))?.message, id)) throw error;
        }
        head = await findHead(api, branch);
        if (!head) throw new DeployError("remote_error", `Bitbucket accepted the commit but branch ${branch} does not exist.`);
        await runLog.info(`Committed ${head.hash.slice(0, 12)} to branch ${branch}.`, { commit: head.hash, branch });
      }

      const found = await findPull(api, branch, config.branch);
      let pull = found;
      if (!pull) {
        const text = pullRequestText(id, files.length, config.branch);
        try {
          const created = (await api.post<PullJson>("/pullrequests", { title: text.title, description: text.body, source: { branch: { name: branch } }, destination: { branch: { name: config.branch } } }))!;
          pull = { id: created.id, url: created.links.html.href };
        } catch (error) {
          pull = await findPull(api, branch, config.branch);
          if (!pull) throw error;
        }
      }
      await runLog.info(`${found ? "Reusing the open" : "Opened"} pull request #${pull.id}: ${pull.url}`, { pull_request: pull.id, url: pull.url });
      const result: GitDeployResult = {
        provider: "bitbucket",
        summary: `Committed ${files.length} files to ${name}@${branch}; pull request #${pull.id} against ${config.branch}.`,
        files: files.length,
        bytes,
        branch,
        baseBranch: config.branch,
        commitSha: head!.hash,
        pullRequestNumber: pull.id,
        pullRequestUrl: pull.url,
        reusedCommit,
        reusedPullRequest: Boolean(found),
      };
      await runLog.success(result.summary, { branch, commit: head!.hash, pull_request: pull.id, url: pull.url });
      return result;
    });
  } finally {
    await guarded.close();
  }
}

const branchPath = (branch: string) => `/refs/branches/${encodeURIComponent(branch)}`;

/** The head commit of a branch, or undefined when it does not exist. */
async function findHead(api: Client, branch: string): Promise<{ hash: string; message: string } | undefined> {
  const found = await api.get<BranchJson>(branchPath(branch), true);
  return found ? { hash: found.target.hash, message: found.target.message ?? "" } : undefined;
}

/** The `/src` form: meta fields plus one field per file named `/<path>`. */
export function commitForm(files: DeployFile[], branch: string, parent: string, message: string): FormData {
  const form = new FormData();
  form.append("message", message);
  form.append("branch", branch);
  form.append("parents", parent);
  for (const file of files) form.append(`/${file.path}`, new Blob([new Uint8Array(file.content)]), file.path.split("/").at(-1));
  return form;
}

/** The open pull request from `branch` into `base`, if any. */
async function findPull(api: Client, branch: string, base: string): Promise<{ id: number; url: string } | undefined> {
  const q = `source.branch.name="${branch}" AND destination.branch.name="${base}" AND state="OPEN"`;
  const page = await api.get<{ values: PullJson[] }>(`/pullrequests?${new URLSearchParams({ q, pagelen: "10" }).toString()}`);
  const first = page?.values[0];
  return first && { id: first.id, url: first.links.html.href };
}

/** Checks credentials, repository and branch; reports, never throws. */
export async function testBitbucketConnection(raw: BitbucketConfig, options: TestConnectionOptions): Promise<ConnectionTestResult> {
  const scrubber = scrubberFor(raw);
  const guarded = createGuardedFetch(options.network, pinnedTo((raw as Partial<BitbucketConfig> | null)?.api_url, DEFAULT_API));
  try {
    const config = parseConfig(bitbucketConfigSchema, raw);
    await checkApiUrl(config.api_url ?? DEFAULT_API, options.network);
    const api = bitbucketClient(config, guarded.fetch, scrubber, options.signal);
    const repo = await api.get<{ full_name: string }>("");
    await api.get(branchPath(config.branch));
    return { ok: true, message: `Connected to ${repo?.full_name ?? `${config.workspace}/${config.repo}`}; branch ${config.branch} exists.` };
  } catch (error) {
    const failure = error instanceof DeployError ? error : gitFailure(error, `Bitbucket (${raw.workspace}/${raw.repo})`, scrubber);
    return { ok: false, code: failure.code, message: scrubber.text(failure.message) };
  } finally {
    await guarded.close();
  }
}

/** The Bitbucket deployer. */
export const bitbucketDeployer: Deployer<BitbucketConfig, GitDeployResult> = { deploy: deployBitbucket, testConnection: testBitbucketConnection };
