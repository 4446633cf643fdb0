/**
 * The embedded OAuth 2.0 server (oidc-provider) behind POST /api/oauth/token: the
 * `password` grant registered on the provider and its built-in `refresh_token` grant.
 * Access tokens are RS256 JWTs with the spec's claims (header typ JWT; aud = client id;
 * iss, jti, iat, nbf, exp, sub = user id, scope), 1 hour; refresh tokens last 30 days,
 * rotate on every use, and presenting a rotated one revokes its whole grant (family).
 */
import Provider, { errors, type KoaContextWithOIDC } from "oidc-provider";
import type { Config } from "../../shared/config.ts";
import type { DatabasePool } from "../../shared/db/pool.ts";
import { findUserById } from "../../shared/db/users.ts";
import { postgresAdapter } from "./adapter.ts";
import type { SigningKeys } from "./keys.ts";
import { passwordGrant, passwordGrantParameters } from "./passwordGrant.ts";
import type { AttemptCounter } from "../../shared/rateLimit.ts";
import { SCOPES } from "../../shared/auth/scopes.ts";

/** The resource indicator of this API; every access token is issued for it. */
export const API_RESOURCE = "urn:schemaforge:api";
export const API_SCOPES = SCOPES;
export const ACCESS_TOKEN_TTL_S = 3600;
export const REFRESH_TOKEN_TTL_S = 30 * 24 * 3600;

/** The issuer: where the provider is mounted. */
export const issuerFor = (config: Config) => `${config.appUrl}/api/oauth`;

export interface ProviderDeps {
  config: Config;
  pool: DatabasePool;
  keys: SigningKeys;
  attempts: AttemptCounter;
}

/** What oidc-provider needs to know about this API as a resource server. */
export function resourceServerInfo(clientId: string) {
  return {
    scope: API_SCOPES.join(" "),
    audience: clientId,
    accessTokenTTL: ACCESS_TOKEN_TTL_S,
    accessTokenFormat: "jwt" as const,
    jwt: { sign: { alg: "RS256" as const } },
  };
}

/** Builds the provider. */
export function createProvider(deps: ProviderDeps): Provider {
  const { config, pool, keys } = deps;
  const provider = new Provider(issuerFor(config), {
    adapter: postgresAdapter(pool, config.appKey),
    jwks: { keys: keys.privateJwks },
    async findAccount(_ctx, sub) {
      const user = /^\d{1,18}$/.test(sub) ? await findUserById(pool, Number(sub)) : null;
      // A disabled account has no account here, so its refresh tokens stop working too.
      if (!user || user.disabled_at) return undefined;
      return { accountId: sub, claims: async () => ({ sub }) };
    },
    scopes: [...API_SCOPES],
    clientDefaults: {
      grant_types: ["password", "refresh_token"],
      response_types: [],
      token_endpoint_auth_method: "client_secret_post",
      id_token_signed_response_alg: "RS256",
    },
    responseTypes: ["none"],
    features: {
      devInteractions: { enabled: false },
      // No browser sign-in happens here (password and refresh grants only): the endpoints of one
      // are off. The logout page wrote a Session row for any anonymous GET and answered an
      // auto-submitting HTML form from the API's origin.
      rpInitiatedLogout: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      userinfo: { enabled: false },
      // A client revokes only its own tokens (oidc-provider's default, said here so it stays put).
      revocation: {
        enabled: true,
        allowedPolicy: (_ctx, client, token) => {
          if (token.clientId !== client.clientId) throw new errors.InvalidRequest("client is not authorized to revoke the presented token");
          return true;
        },
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => API_RESOURCE,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource, client) => {
          if (resource !== API_RESOURCE) throw new errors.InvalidTarget();
          return resourceServerInfo(client.clientId);
        },
      },
    },
    formats: {
      customizers: {
        // The spec's token: header typ "JWT" (not RFC 9068's at+jwt) and an nbf claim.
        jwt: (_ctx, token, jwt) => {
          jwt.header = { typ: "JWT" };
          jwt.payload.nbf = jwt.payload.iat;
          jwt.payload.iat_ms = Date.now();
          // The grant id lets POST /logout end this session's refresh tokens too.
          if ("grantId" in token && token.grantId) jwt.payload.gid = token.grantId;
        },
      },
    },
    ttl: {
      AccessToken: ACCESS_TOKEN_TTL_S,
      RefreshToken: REFRESH_TOKEN_TTL_S,
      // The grant outlives any one refresh token: each rotation starts a fresh 30 days,
      // up to a year after the password was given.
      Grant: 365 * 24 * 3600,
      ClientCredentials: ACCESS_TOKEN_TTL_S,
      Interaction: 600,
      Session: 3600,
    },
    rotateRefreshToken: true,
    // Enables the refresh_token grant (oidc-provider turns it on only when refresh tokens
    // may be issued); the password grant issues them itself.
    issueRefreshToken: async () => true,
    pkce: { required: () => false },
    // Browsers send an Origin even to their own site's POSTs: the service's own pages (the
    // operator console) may call the token endpoint; other sites may not.
    clientBasedCORS: (_ctx, origin) => origin === new URL(config.appUrl).origin,
    renderError: (ctx: KoaContextWithOIDC, out) => {
      ctx.type = "application/json";
      ctx.body = out;
    },
  });
  provider.proxy = config.trustProxy;
  provider.registerGrantType("password", passwordGrant(deps), passwordGrantParameters);
  // The spec answers bad client credentials with 400 (RFC 6749 allows 401).
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.status === 404 && !ctx.body) {
      ctx.type = "application/json";
      ctx.body = { error: "not_found", error_description: "no such OAuth endpoint" };
      ctx.status = 404;
    }
    if (ctx.status === 401 && (ctx.body as { error?: string } | undefined)?.error === "invalid_client") {
      ctx.status = 400;
      ctx.remove("WWW-Authenticate");
    }
  });
  return provider;
}
