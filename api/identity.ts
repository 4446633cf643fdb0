/**
 * The identity services of a web process: signing keys, the OAuth provider, the client
 * cache for token audiences, the first-party client, and the rate limiters.
 */
import type Provider from "oidc-provider";
import { ensureFirstPartyClient } from "../shared/auth/clients.ts";
import { allowedScopes, scopeString, type Scope } from "../shared/auth/scopes.ts";
import type { Config } from "../shared/config.ts";
import type { DatabasePool } from "../shared/db/pool.ts";
import type { Logger } from "../shared/logger.ts";
import { AttemptCounter, RateLimiter } from "../shared/rateLimit.ts";
import { AccessTokenVerifier, ClientIdCache, mintAccessToken, type MintedToken } from "./oauth/accessTokens.ts";
import { PassedTokens } from "./oauth/passedTokens.ts";
import { loadSigningKeys, type SigningKeys } from "./oauth/keys.ts";
import { createProvider, issuerFor } from "./oauth/provider.ts";

export interface Identity {
  issuer: string;
  keys: SigningKeys;
  provider: Provider;
  clients: ClientIdCache;
  verifier: AccessTokenVerifier;
  /** Access tokens that passed the revocation checks, trusted while their user's token_epoch holds. */
  passedTokens: PassedTokens;
  firstPartyClientId: string;
  limiter: RateLimiter;
  attempts: AttemptCounter;
  /**
   * An access token of the first-party client for `user` (login and similar routes), with
   * every scope the user's roles allow, or `scopes` when a token is renewed for a caller
   * whose own token was narrower.
   */
  mintUserToken(user: { id: number; roles: readonly string[] }, ttlS: number, scopes?: readonly Scope[]): Promise<MintedToken>;
  close(): Promise<void>;
}

export async function createIdentity(config: Config, pool: DatabasePool, log: Logger): Promise<Identity> {
  const keys = await loadSigningKeys(pool, config.appKey, config.oauth.jwks);
  const firstParty = await ensureFirstPartyClient(pool, config, log);
  const clients = new ClientIdCache(pool);
  await clients.reload();
  const attempts = new AttemptCounter(pool, config.rateLimit.loginMaxAttempts, config.rateLimit.loginLockoutS);
  const limiter = new RateLimiter(pool);
  const issuer = issuerFor(config);
  const provider = createProvider({ config, pool, keys, attempts });
  return {
    issuer,
    keys,
    provider,
    clients,
    verifier: new AccessTokenVerifier(keys, issuer, clients),
    passedTokens: new PassedTokens(),
    firstPartyClientId: firstParty.clientId,
    limiter,
    attempts,
    mintUserToken: (user, ttlS, scopes) =>
      mintAccessToken(keys, issuer, firstParty.clientId, user.id, scopeString(scopes ?? allowedScopes(user.roles)), ttlS),
    close: () => limiter.close(),
  };
}
