/**
 * Git sign-in as operations: start (a state bound to the user, a PKCE pair where the host
 * supports it, the authorization URL), finish (the state used once, the code exchanged, the
 * account looked up, the tokens sealed), and the token of a connection for the workers,
 * refreshed first when it is about to expire.
 */
import { randomToken } from "../crypto.ts";
import type { Config } from "../config.ts";
import type { DatabasePool } from "../db/pool.ts";
import { AppError } from "../errors.ts";
import { assertPublicHost, NetworkTargetError, networkPolicy } from "../net/networkGuard.ts";
import { accountOf } from "./account.ts";
import { assertUsable } from "./connectionState.ts";
import { authorizationUrl, exchangeCode, pkcePair, refreshTokens } from "./oauthClient.ts";
import { providerNames, providerSettings, redirectUriOf, type GitHost, type ProviderSettings } from "./providers.ts";
import { consumeState, findConnection, insertState, openConnectionTokens, storeRefreshedTokens, upsertConnection, type ConnectionRow } from "./store.ts";

/** The settings of a provider this server signs in to. @throws 404 when it has no OAuth client there */
export function enabledProvider(config: Config, provider: GitHost): ProviderSettings {
  const settings = providerSettings(config, provider);
  if (!settings) throw new AppError(404, "git_provider_disabled", `${providerNames[provider]} sign-in is not configured on this server.`);
  return settings;
}

/** Starts a sign-in of `userId` at `provider`. */
export async function startSignIn(pool: DatabasePool, config: Config, userId: number, provider: GitHost) {
  const settings = enabledProvider(config, provider);
  // A self-hosted GitLab on a private address is refused here already (and at every request).
  try {
    await assertPublicHost(settings.tokenEndpoint, networkPolicy(config));
  } catch (error) {
    if (error instanceof NetworkTargetError) throw new AppError(422, error.code, `${providerNames[provider]} at ${settings.instanceUrl}: ${error.message}`);
  }
  const state = randomToken(32);
  const pkce = settings.pkce ? await pkcePair() : null;
  const redirectUri = redirectUriOf(config, provider);
  const expiresAt = await insertState(pool, config.appKey, { state, userId, provider, verifier: pkce?.verifier ?? null, redirectUri });
  return { authorizationUrl: authorizationUrl(settings, { state, redirectUri, codeChallenge: pkce?.challenge ?? null }), state, expiresAt, redirectUri, pkce: pkce !== null };
}

const stateRefused = () =>
  new AppError(422, "oauth_state_invalid", "The sign-in is unknown, expired, already used or someone else's; start it again.", {
    state: ["The sign-in is unknown, expired, already used or someone else's; start it again."],
  });

/**
 * Finishes a sign-in with what the provider sent back. @throws 422 `oauth_state_invalid`,
 * `oauth_denied`, `oauth_code_rejected`; 502 `provider_unavailable`
 */
export async function finishSignIn(
  pool: DatabasePool,
  config: Config,
  userId: number,
  provider: GitHost,
  callback: { code?: string | undefined; state?: string | undefined; error?: string | undefined; error_description?: string | undefined },
): Promise<ConnectionRow> {
  const settings = enabledProvider(config, provider);
  if (!callback.state) throw stateRefused();
  const pending = await consumeState(pool, config.appKey, callback.state, userId, provider);
  if (!pending) throw stateRefused();
  if (callback.error) {
    const said = `${callback.error}${callback.error_description ? `: ${callback.error_description.slice(0, 200)}` : ""}`;
    throw new AppError(422, "oauth_denied", `${providerNames[provider]} did not authorize the connection (${said}).`, { code: [`${providerNames[provider]} answered ${said}.`] });
  }
  if (!callback.code) throw new AppError(422, "validation_failed", "The code field is required.", { code: ["The code field is required."] });
  const network = networkPolicy(config);
  const tokens = await exchangeCode(settings, { code: callback.code, state: callback.state, redirectUri: pending.redirectUri, verifier: pending.verifier }, network);
  const account = await accountOf(provider, settings.apiBase, tokens.accessToken, network);
  return upsertConnection(pool, config.appKey, { userId, provider, instanceUrl: settings.instanceUrl, apiBase: settings.apiBase, account, tokens });
}

/** A token is renewed when it expires within this margin (a job may run for minutes). */
const REFRESH_MARGIN_MS = 5 * 60 * 1000;

/** What a worker needs to call a host for a connection. */
export interface ConnectionAccess {
  connection: ConnectionRow;
  token: string;
  /** The REST API base for the SDKs. */
  apiBase: string;
}

/**
 * The access token of connection `id`, refreshed first when it expires soon (one refresher at
 * a time: the row is locked while the host answers, as hosts rotate refresh tokens). A
 * connection made with another instance than the configured one is refused before any token
 * is opened.
 * @throws AppError 404 (gone), 401 `git_reauthorization_required`, 502
 */
export async function connectionAccess(pool: DatabasePool, config: Config, id: number): Promise<ConnectionAccess> {
  const connection = await findConnection(pool, id);
  if (!connection) throw new AppError(404, "not_found", "The git connection was removed; connect the account again.");
  // A connection made with another instance than the one configured now is not used at all:
  // neither its access token nor its refresh token goes to the new one (connectionState.ts).
  assertUsable(config, connection);
  const settings = providerSettings(config, connection.provider)!;
  const apiBase = settings.apiBase;
  const expiring = connection.expires_at !== null && connection.expires_at.getTime() - Date.now() < REFRESH_MARGIN_MS;
  if (!expiring) {
    const tokens = await openConnectionTokens(pool, config.appKey, id);
    if (!tokens) throw new AppError(404, "not_found", "The git connection was removed; connect the account again.");
    return { connection, token: tokens.accessToken, apiBase };
  }
  return pool.transaction(async (tx) => {
    const locked = await findConnection(tx, id, true);
    const tokens = locked && (await openConnectionTokens(tx, config.appKey, id));
    if (!locked || !tokens) throw new AppError(404, "not_found", "The git connection was removed; connect the account again.");
    // Another worker may have renewed it while this one waited for the lock.
    if (locked.expires_at === null || locked.expires_at.getTime() - Date.now() >= REFRESH_MARGIN_MS) return { connection: locked, token: tokens.accessToken, apiBase };
    if (!tokens.refreshToken) {
      throw new AppError(401, "git_reauthorization_required", `The ${providerNames[locked.provider]} token of ${locked.account_login} has expired; connect the account again.`);
    }
    const renewed = await refreshTokens(settings, tokens.refreshToken, networkPolicy(config));
    await storeRefreshedTokens(tx, config.appKey, id, renewed);
    return { connection: (await findConnection(tx, id))!, token: renewed.accessToken, apiBase };
  });
}
