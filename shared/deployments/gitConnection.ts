/**
 * Environments whose git config names a git connection (`connection_id`, a user's sign-in at
 * the host, shared/git) instead of a pasted token. On write the connection must exist, be the
 * writer's own and be for the config's provider: an environment is shared by the project's
 * members, and only the connection's owner may point their token at a repository. At run
 * time the connection's token (refreshed when it is about to expire) and its host are put
 * into the config the deployer gets, as an OAuth token.
 */
import type { Config } from "../config.ts";
import type { CommonQueryMethods, DatabasePool } from "../db/pool.ts";
import { DeployError } from "../deploy/errors.ts";
import type { DeployTarget } from "../deploy/index.ts";
import { detectGitProvider, type GitConfig } from "../deploy/configs.ts";
import { AppError, type FieldErrors } from "../errors.ts";
import { providerNames } from "../git/providers.ts";
import { connectionAccess } from "../git/signIn.ts";
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
 * The target with a git connection's token and host filled in, when its config names one;
 * other targets unchanged.
 * @throws DeployError `invalid_config` (connection removed, provider no longer configured),
 * `auth_failed` (the host refused to renew the token), `unreachable`
 */
export async function withConnectionToken(pool: DatabasePool, config: Config, target: DeployTarget): Promise<DeployTarget> {
  if (target.method !== "git") return target;
  const id = connectionIdOf(target.config);
  if (id === null) return target;
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
