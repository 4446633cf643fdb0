/**
 * The GitLab deployer (@gitbeaker/rest, gitlab.com or a self-hosted `gitlab_url`): one
 * commit through the commits API, which creates the deployment's branch from the configured
 * branch in the same request (`start_branch`), then a merge request against it.
 *
 * GitLab's commit actions distinguish `create` from `update`, so the files already on the
 * starting ref are listed first. Retries: a branch whose head commit carries this
 * deployment's trailer already holds the commit; the open merge request for the branch is
 * looked up before one is created (and again on a 409 "already exists").
 */
import { Gitlab } from "@gitbeaker/rest";
import { GuardedDispatcher } from "../../net/guardedDispatcher.ts";
import { gitlabConfigSchema, parseConfig, type GitlabConfig } from "../configs.ts";
import { DeployError } from "../errors.ts";
import { collectFiles, safeId } from "../files.ts";
import { createRunLog, formatBytes, runLogged } from "../runLog.ts";
import { scrubberFor } from "../scrub.ts";
import type { ConnectionTestResult, Deployer, DeployRequest, TestConnectionOptions } from "../types.ts";
import { checkApiUrl, commitMessage, deploymentBranch, gitFailure, isDeploymentCommit, pinnedTo, pullRequestText, statusOf, type GitDeployResult } from "./gitCommon.ts";

const DEFAULT_URL = "https://gitlab.com";

/** A Gitbeaker client whose requests go through the guarded dispatcher. */
function gitlabClient(config: { gitlab_url?: string | null; access_token: string; token_type?: "personal" | "oauth" | undefined }, dispatcher: GuardedDispatcher) {
  // A connection's OAuth token goes as a Bearer token; a personal one as PRIVATE-TOKEN.
  const auth = config.token_type === "oauth" ? { oauthToken: config.access_token } : { token: config.access_token };
  // Gitbeaker hands `agent` to fetch as its undici dispatcher; its type says http.Agent.
  return new Gitlab({ host: (config.gitlab_url ?? DEFAULT_URL).replace(/\/+$/, ""), ...auth, agent: dispatcher as never, queryTimeout: 60_000 });
}


type Api = ReturnType<typeof gitlabClient>;

/** Deploys to GitLab; see the module comment. @throws DeployError */
export async function deployGitlab(request: DeployRequest<GitlabConfig>): Promise<GitDeployResult> {
  const scrubber = scrubberFor(request.config);
  const runLog = createRunLog(request.log, scrubber);
  // Pinned to the instance (pinnedTo): a redirect elsewhere would take PRIVATE-TOKEN along.
  const dispatcher = new GuardedDispatcher(request.network, pinnedTo((request.config as Partial<GitlabConfig> | null)?.gitlab_url, DEFAULT_URL));
  try {
    return await runLogged(runLog, scrubber, "GitLab deployment", request.signal, async () => {
      const config = parseConfig(gitlabConfigSchema, request.config);
      const id = safeId(request.deploymentId);
      const branch = deploymentBranch(id);
      const project = config.project_id;
      await checkApiUrl(config.gitlab_url ?? DEFAULT_URL, request.network);
      const api = gitlabClient(config, dispatcher);
      const call = async <T>(where: string, body: () => Promise<T>): Promise<T> => {
        try {
          return await body();
        } catch (error) {
          throw gitFailure(error, `GitLab ${where} (project ${project})`, scrubber);
        }
      };

      const files = await collectFiles(request.files);
      const bytes = files.reduce((sum, f) => sum + f.content.length, 0);
      await runLog.info(`Preparing one commit of ${files.length} files (${formatBytes(bytes)}) for project ${project}, branch ${branch} from ${config.branch}.`);
      await call(`read of branch ${config.branch}`, () => api.Branches.show(project, config.branch));
      let head = await call(`read of branch ${branch}`, () => findBranch(api, project, branch));
      const reusedCommit = isDeploymentCommit(head?.message, id);
      if (reusedCommit) {
        await runLog.info(`Branch ${branch} already holds this deployment's commit (${head!.id.slice(0, 12)}); reusing it.`);
      } else {
        const onto = head ? branch : config.branch;
        const existing = await call(`listing of ${onto}`, () => listPaths(api, project, onto));
        const actions = files.map((file) => ({
          action: existing.has(file.path) ? ("update" as const) : ("create" as const),
          filePath: file.path,
          content: file.content.toString("base64"),
          encoding: "base64" as const,
        }));
        try {
          const commit = await api.Commits.create(project, branch, commitMessage(id, files.length), actions, head ? {} : { startBranch: config.branch });
          head = { id: commit.id, message: commit.message ?? "" };
        } catch (error) {
          // A lost answer of an earlier attempt: the branch may now hold our commit.
          const now = await call(`read of branch ${branch}`, () => findBranch(api, project, branch));
          if (!isDeploymentCommit(now?.message, id)) throw gitFailure(error, `GitLab commit (project ${project})`, scrubber);
          head = now;
        }
        await runLog.info(`Committed ${head!.id.slice(0, 12)} to branch ${branch}.`, { commit: head!.id, branch });
      }

      const found = await call("merge request lookup", () => findMergeRequest(api, project, branch, config.branch));
      let mr = found;
      if (!mr) {
        const text = pullRequestText(id, files.length, config.branch);
        try {
          const created = await api.MergeRequests.create(project, branch, config.branch, text.title, { description: text.body });
          mr = { iid: created.iid, web_url: created.web_url };
        } catch (error) {
          if (statusOf(error) !== 409) throw gitFailure(error, `GitLab merge request (project ${project})`, scrubber);
          mr = await call("merge request lookup", () => findMergeRequest(api, project, branch, config.branch));
          if (!mr) throw gitFailure(error, `GitLab merge request (project ${project})`, scrubber);
        }
      }
      await runLog.info(`${found ? "Reusing the open" : "Opened"} merge request !${mr.iid}: ${mr.web_url}`, { merge_request: mr.iid, url: mr.web_url });
      const result: GitDeployResult = {
        provider: "gitlab",
        summary: `Committed ${files.length} files to project ${project}@${branch}; merge request !${mr.iid} against ${config.branch}.`,
        files: files.length,
        bytes,
        branch,
        baseBranch: config.branch,
        commitSha: head!.id,
        pullRequestNumber: mr.iid,
        pullRequestUrl: mr.web_url,
        reusedCommit,
        reusedPullRequest: Boolean(found),
      };
      await runLog.success(result.summary, { branch, commit: head!.id, merge_request: mr.iid, url: mr.web_url });
      return result;
    });
  } finally {
    await dispatcher.close();
  }
}

/** The head commit of a branch, or undefined when the branch does not exist. */
async function findBranch(api: Api, project: number, branch: string): Promise<{ id: string; message: string } | undefined> {
  try {
    const found = await api.Branches.show(project, branch);
    return { id: found.commit.id, message: found.commit.message ?? "" };
  } catch (error) {
    if (statusOf(error) === 404) return undefined;
    throw error;
  }
}

/** Every file path on a ref (all pages). */
async function listPaths(api: Api, project: number, ref: string): Promise<Set<string>> {
  const items = await api.Repositories.allRepositoryTrees(project, { ref, recursive: true, perPage: 100, pagination: "offset" } as never);
  return new Set((items as Array<{ type: string; path: string }>).filter((item) => item.type === "blob").map((item) => item.path));
}

/** The open merge request from `branch` into `base`, if any. */
async function findMergeRequest(api: Api, project: number, branch: string, base: string): Promise<{ iid: number; web_url: string } | undefined> {
  const found = await api.MergeRequests.all({ projectId: project, sourceBranch: branch, targetBranch: base, state: "opened", perPage: 10, maxPages: 1 });
  const first = found[0];
  return first && { iid: first.iid, web_url: first.web_url };
}

/** Checks token, project and branch; reports, never throws. */
export async function testGitlabConnection(raw: GitlabConfig, options: TestConnectionOptions): Promise<ConnectionTestResult> {
  const scrubber = scrubberFor(raw);
  const dispatcher = new GuardedDispatcher(options.network, pinnedTo((raw as Partial<GitlabConfig> | null)?.gitlab_url, DEFAULT_URL));
  try {
    const config = parseConfig(gitlabConfigSchema, raw);
    await checkApiUrl(config.gitlab_url ?? DEFAULT_URL, options.network);
    const api = gitlabClient(config, dispatcher);
    const project = await api.Projects.show(config.project_id);
    await api.Branches.show(config.project_id, config.branch);
    return { ok: true, message: `Connected to ${String(project.path_with_namespace)}; branch ${config.branch} exists.` };
  } catch (error) {
    const failure = error instanceof DeployError ? error : gitFailure(error, `GitLab (project ${String(raw.project_id)})`, scrubber);
    return { ok: false, code: failure.code, message: scrubber.text(failure.message) };
  } finally {
    await dispatcher.close();
  }
}

/** The GitLab deployer. */
export const gitlabDeployer: Deployer<GitlabConfig, GitDeployResult> = { deploy: deployGitlab, testConnection: testGitlabConnection };
