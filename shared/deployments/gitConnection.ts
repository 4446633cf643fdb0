/**
 * Environments whose git config names a git connection (`connection_id`, a user's sign-in at
 * the host, shared/git) instead of a pasted token. On write the connection must exist, be the
 * writer's own and be for the config's provider: an environment is shared by the project's
 * members, and only the connection's owner may point their token at a repository. At run
 * time the connection's token (refreshed when it is about to expire) and its host are put
 * into the config the deployer gets, as an OAuth token, as long as the connection's owner
 * still manages the project's deployments (else the environment stops using it).
 */
import type { Config } from "../config.ts";
import type { CommonQueryMethods, DatabasePool } from "../db/pool.ts";
import { DeployError } from "../deploy/errors.ts";
import type { DeployTarget } from "../deploy/index.ts";
import { detectGitProvider, type GitConfig } from "../deploy/configs.ts";
import { AppError, type FieldErrors } from "../errors.ts";
import { providerNames } from "../git/providers.ts";
import { connectionAccess } from "../git/signIn.ts";
import { findProject } from "../db/projects.ts";
import { findUserById } from "../db/users.ts";
import { findConnection } from "../git/store.ts";

/** The connection a stored or prepared git config names, or null. */
export function connectionIdOf(config: Record<string, unknown> | null | undefined): number | null {
  const id = config?.connection_id;
  return typeof id === "number" ? id : null;
}

/** Checks the connection a prepared git config names against `userId`; field errors under `git_config.connection_id`. */
export async function checkGitConnection(conn: CommonQueryMethods, userId: number, config: Record<string, unknown>): Promise<FieldErrors> {
  const id = connectionIdOf(config);
  if (id === null) return {};
  const connection = await findConnection(conn, id);
  if (!connection || connection.user_id !== userId) return { "git_config.connection_id": ["You have no git connection with this id."] };
  const provider = detectGitProvider(config);
  if (connection.provider !== provider) {
    return { "git_config.connection_id": [`The connection is to ${providerNames[connection.provider]}, but the config is for ${provider ? providerNames[provider] : "another host"}.`] };
  }
  return {};
}

/**
 * Whether the owner of connection `id` may still configure deployments of `projectId` (owns
 * or administers it, or is a super administrator) and is not disabled: the right they needed
 * to point their token at the project's repository. Someone who left the project, or was
 * demoted, no longer lends it their account.
 */
async function ownerStillManages(pool: DatabasePool, id: number, projectId: number): Promise<{ ok: boolean; login: string | null }> {
  const connection = await findConnection(pool, id);
  if (!connection) return { ok: true, login: null };
  const owner = await findUserById(pool, connection.user_id);
  if (!owner || owner.disabled_at !== null) return { ok: false, login: connection.account_login };
  if (owner.roles.includes("super_admin")) return { ok: true, login: connection.account_login };
  const project = await findProject(pool, projectId, owner.id);
  return { ok: project?.access === "owner" || project?.access === "admin", login: connection.account_login };
}

/**
 * Refuses an environment's connection whose owner no longer manages the project's deployments.
 * @throws DeployError `invalid_config`
 */
export async function assertConnectionLent(pool: DatabasePool, connectionId: number, projectId: number): Promise<void> {
  const owner = await ownerStillManages(pool, connectionId, projectId);
  if (owner.ok) return;
  throw new DeployError(
    "invalid_config",
    `The git connection of this environment (${owner.login}) belongs to someone who no longer manages this project's deployments; its token is not used. Give the environment another connection or a token.`,
  );
}

/**
 * The target with a git connection's token and host filled in, when its config names one;
 * other targets unchanged. With `projectId` (a stored environment's project), the
 * connection's owner must still manage that project's deployments.
 * @throws DeployError `invalid_config` (connection removed, provider no longer configured,
 * owner no longer managing the project), `auth_failed` (the host refused to renew the token),
 * `unreachable`
 */
export async function withConnectionToken(pool: DatabasePool, config: Config, target: DeployTarget, projectId?: number): Promise<DeployTarget> {
  if (target.method !== "git") return target;
  const id = connectionIdOf(target.config);
  if (id === null) return target;
  if (projectId !== undefined) await assertConnectionLent(pool, id, projectId);
  let access;
  try {
    access = await connectionAccess(pool, config, id);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    throw new DeployError(error.status >= 500 ? "unreachable" : error.status === 401 ? "auth_failed" : "invalid_config", error.message);
  }
  const { connection_id: _id, ...rest } = target.config as Record<string, unknown>;
  const host = access.connection.provider === "gitlab" ? { gitlab_url: access.apiBase } : { api_url: access.apiBase };
  return { method: "git", config: { ...rest, ...host, provider: access.connection.provider, access_token: access.token, token_type: "oauth" } as GitConfig };
}
