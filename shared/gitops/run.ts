/**
 * One attempt of a commit or push (a deployment with `operation` `commit` or `push`, run by
 * the deployments__run job): the access comes from the user's git connection (refreshed
 * when its token expires), the connection the environment's git config names, or the
 * environment's token; the host's implementation in
 * shared/deploy/git/branchOps*.ts does the work; logs, retries and the outcome are a
 * deployment's (shared/deployments/run.ts `settleRun`).
 */
import type { AnyDeployResult } from "../deploy/index.ts";
import { detectGitProvider } from "../deploy/configs.ts";
import { DeployError } from "../deploy/errors.ts";
import type { CommitResult, GitAccess, PushResult } from "../deploy/git/branchOps.ts";
import { commitBitbucket, pushBitbucket } from "../deploy/git/branchOpsBitbucket.ts";
import { commitGithub, pushGithub } from "../deploy/git/branchOpsGithub.ts";
import { commitGitlab, pushGitlab } from "../deploy/git/branchOpsGitlab.ts";
import { scrubberFor } from "../deploy/scrub.ts";
import { findEnvironment, openEnvironmentSecrets, type EnvironmentRow } from "../deployments/environments.ts";
import { assertConnectionLent, connectionIdOf } from "../deployments/gitConnection.ts";
import type { DeploymentRow } from "../deployments/records.ts";
import { failBeforeStart, settleRun, type RunContext, type RunOutcome } from "../deployments/run.ts";
import { assembleConfig } from "../deployments/targetConfigs.ts";
import { AppError } from "../errors.ts";
import { generationFiles } from "../generations/files.ts";
import { connectionAccess } from "../git/signIn.ts";
import { networkPolicy } from "../net/networkGuard.ts";

/** The git target a commit or push row keeps. */
export interface GitTarget {
  provider: GitAccess["provider"];
  repository: string;
  branch: string;
  /** Commit: the message. */
  message?: string;
  /** Push: the commit to point the branch at. */
  commit?: string;
}

/** The repository an environment's git config names (GitLab: the project id). */
export function environmentRepository(config: Record<string, unknown>): string {
  const provider = detectGitProvider(config);
  if (provider === "gitlab") return String(config.project_id);
  if (provider === "bitbucket") return `${String(config.workspace)}/${String(config.repo)}`;
  return `${String(config.owner)}/${String(config.repo)}`;
}

/**
 * An operation through an environment goes to the environment's repository, as checked when
 * it was queued; when the environment has since been moved to another host or repository, its
 * access is not sent to the old one (a retry, a job queued before the change).
 * @throws DeployError `invalid_config`
 */
function assertEnvironmentTarget(env: EnvironmentRow, target: GitTarget): void {
  const config = env.git_config ?? {};
  const repository = environmentRepository(config);
  if (detectGitProvider(config) !== target.provider || repository.toLowerCase() !== target.repository.toLowerCase()) {
    throw new DeployError("invalid_config", `The environment "${env.name}" now goes to ${repository}, not ${target.repository}; start a new operation.`);
  }
}

const defaultApis = { github: "https://api.github.com", gitlab: "https://gitlab.com", bitbucket: "https://api.bitbucket.org/2.0" } as const;

/** The access of a row: its connection, else its environment's git config. @throws DeployError */
async function accessOf(ctx: RunContext, deployment: DeploymentRow): Promise<GitAccess> {
  const env = deployment.environment_id === null ? null : await findEnvironment(ctx.pool, deployment.environment_id);
  if (env?.git_config && deployment.git_connection_id === null) assertEnvironmentTarget(env, deployment.git_target as unknown as GitTarget);
  // The row's own connection, else the one its environment's git config names.
  const connectionId = deployment.git_connection_id ?? connectionIdOf(env?.git_config);
  if (connectionId !== null) {
    // An environment's connection is lent by its owner for as long as they manage the project.
    if (deployment.git_connection_id === null && env) await assertConnectionLent(ctx.pool, connectionId, env.project_id);
    try {
      const access = await connectionAccess(ctx.pool, ctx.config, connectionId);
      return { provider: access.connection.provider, apiBase: access.apiBase, token: access.token, kind: "oauth" };
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      throw new DeployError(error.status >= 500 ? "unreachable" : error.status === 401 ? "auth_failed" : "invalid_config", error.message);
    }
  }
  if (!env?.git_config) throw new DeployError("invalid_config", "The git connection or environment of this operation was removed.");
  const config = assembleConfig(env.git_config, (await openEnvironmentSecrets(ctx.pool, ctx.config.appKey, env.id)).git) as Record<string, string | undefined>;
  const provider = detectGitProvider(config);
  if (provider === "github") return { provider, apiBase: config.api_url ?? defaultApis.github, token: config.access_token ?? "", kind: "personal" };
  if (provider === "gitlab") return { provider, apiBase: config.gitlab_url ?? defaultApis.gitlab, token: config.access_token ?? "", kind: "personal" };
  if (provider === "bitbucket") return { provider, apiBase: config.api_url ?? defaultApis.bitbucket, token: config.app_password ?? "", username: config.username ?? "", kind: "app_password" };
  throw new DeployError("invalid_config", `The environment "${env.name}" has no usable git configuration.`);
}

/** Runs one attempt of commit or push `deployment` (already marked running). */
export async function runGitOperation(ctx: RunContext, deployment: DeploymentRow): Promise<RunOutcome> {
  const target = deployment.git_target as unknown as GitTarget;
  let access: GitAccess;
  try {
    if (deployment.code_generation_id === null) throw new DeployError("invalid_config", "The code generation of this operation was deleted.");
    access = await accessOf(ctx, deployment);
  } catch (error) {
    return failBeforeStart(ctx, deployment, error);
  }
  const scrubber = scrubberFor({ access_token: access.token, username: access.username ?? "" });
  const what = deployment.operation === "commit" ? "Commit" : "Push";
  return settleRun(ctx, deployment, scrubber, `${what} #${deployment.id} to ${target.repository}@${target.branch} on ${target.provider} started (attempt ${ctx.attempt} of ${ctx.maxAttempts}).`, async (log, signal) => {
    const network = networkPolicy(ctx.config);
    let result: CommitResult | PushResult;
    if (deployment.operation === "commit") {
      const request = { access, repository: target.repository, branch: target.branch, message: target.message ?? "", operationId: deployment.id, files: generationFiles(ctx.pool, deployment.code_generation_id!), log, signal, network };
      result = await (access.provider === "github" ? commitGithub(request) : access.provider === "gitlab" ? commitGitlab(request) : commitBitbucket(request));
    } else {
      const request = { access, repository: target.repository, branch: target.branch, commitSha: target.commit ?? "", log, signal, network };
      result = await (access.provider === "github" ? pushGithub(request) : access.provider === "gitlab" ? pushGitlab(request) : pushBitbucket(request));
    }
    return result as unknown as AnyDeployResult;
  });
}
