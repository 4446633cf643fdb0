/**
 * The entry point of the deployers for the rest of the service: pick the deployer of a
 * target (`ftp`, `ssh`, or `git` with the provider told by its config) and run it.
 *
 * ```ts
 * const result = await deploy({ method: "ftp", config: environment.ftp_config }, {
 *   deploymentId: deployment.id, files, log, signal, state, network: networkPolicy(config),
 * });
 * ```
 */
import { detectGitProvider, type FtpConfig, type GitConfig, type SshConfig } from "./configs.ts";
import { DeployError } from "./errors.ts";
import { ftpDeployer, type FtpDeployResult } from "./ftp/ftpDeploy.ts";
import { bitbucketDeployer } from "./git/bitbucket.ts";
import type { GitDeployResult } from "./git/gitCommon.ts";
import { githubDeployer } from "./git/github.ts";
import { gitlabDeployer } from "./git/gitlab.ts";
import { sshDeployer, type SshDeployResult } from "./ssh/sshDeploy.ts";
import type { ConnectionTestResult, Deployer, DeployRequest, TestConnectionOptions } from "./types.ts";

/** Where a deployment goes: the spec's `deployment_method` and the environment's config. */
export type DeployTarget = { method: "ftp"; config: FtpConfig } | { method: "ssh"; config: SshConfig } | { method: "git"; config: GitConfig };

/** The result of any deployer. */
export type AnyDeployResult = FtpDeployResult | SshDeployResult | GitDeployResult;

/** A deployment request without the config (it comes with the target). */
export type TargetRequest = Omit<DeployRequest<unknown>, "config">;

/**
 * The deployer for a target.
 * @throws DeployError `invalid_config` when a git config names no known provider.
 */
export function deployerFor(target: DeployTarget): Deployer<DeployTarget["config"], AnyDeployResult> {
  if (target.method === "ftp") return ftpDeployer;
  if (target.method === "ssh") return sshDeployer;
  const provider = detectGitProvider(target.config);
  if (provider === "github") return githubDeployer;
  if (provider === "gitlab") return gitlabDeployer;
  if (provider === "bitbucket") return bitbucketDeployer;
  throw new DeployError("invalid_config", "The git configuration names no provider: give owner/repo (GitHub), project_id (GitLab) or workspace/repo (Bitbucket).");
}

/** Runs a deployment to `target`. @throws DeployError */
export async function deploy(target: DeployTarget, request: TargetRequest): Promise<AnyDeployResult> {
  return deployerFor(target).deploy({ ...request, config: target.config });
}

/** Tests the connection to `target`; reports failures in the result instead of throwing. */
export async function testConnection(target: DeployTarget, options: TestConnectionOptions): Promise<ConnectionTestResult> {
  try {
    return await deployerFor(target).testConnection(target.config, options);
  } catch (error) {
    if (error instanceof DeployError) return { ok: false, code: error.code, message: error.message };
    throw error;
  }
}
