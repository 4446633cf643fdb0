/**
 * The OAuth 2.0 client side of git sign-in (openid-client, which speaks plain OAuth 2.0 as
 * well as OpenID Connect): the authorization URL with `state` and, where the host supports
 * it, a PKCE S256 challenge; the code exchange; the refresh. Every request goes through the
 * network guard (self-hosted GitLab addresses included).
 *
 * Errors never carry a request or response body onward: a token request holds the client
 * secret, the code and the PKCE verifier, and its answer the tokens.
 */
import * as oidc from "openid-client";
import { AppError } from "../errors.ts";
import { createGuardedFetch } from "../net/guardedFetch.ts";
import { HostLookupError, NetworkTargetError, type NetworkPolicy } from "../net/networkGuard.ts";
import { providerNames, type ProviderSettings } from "./providers.ts";

/** Tokens as the host issued them. */
export interface TokenSet {
  accessToken: string;
  refreshToken: string | null;
  expiresAt: Date | null;
  scopes: string | null;
}

/** A client configuration of `settings`, its requests through the guarded fetch. */
function configuration(settings: ProviderSettings, fetchFn: typeof fetch): oidc.Configuration {
  const auth = settings.clientAuth === "basic" ? oidc.ClientSecretBasic(settings.clientSecret) : oidc.ClientSecretPost(settings.clientSecret);
  const config = new oidc.Configuration(
    { issuer: settings.instanceUrl, authorization_endpoint: settings.authorizationEndpoint, token_endpoint: settings.tokenEndpoint },
    settings.clientId,
    { client_secret: settings.clientSecret },
    auth,
  );
  config[oidc.customFetch] = (url, options) => fetchFn(url, { method: options.method, headers: options.headers, body: options.body as RequestInit["body"], redirect: "manual", signal: options.signal ?? null });
  // Hosts are https in production; a plain-http base is an operator's choice (a test stand-in,
  // an instance on a private network) and the network guard has the last word on it.
  if (settings.tokenEndpoint.startsWith("http:")) oidc.allowInsecureRequests(config);
  return config;
}

/** The authorization URL to send the user to. */
export function authorizationUrl(settings: ProviderSettings, params: { state: string; redirectUri: string; codeChallenge: string | null }): string {
  const query: Record<string, string> = { redirect_uri: params.redirectUri, state: params.state, response_type: "code" };
  if (settings.scope) query.scope = settings.scope;
  if (params.codeChallenge) Object.assign(query, { code_challenge: params.codeChallenge, code_challenge_method: "S256" });
  return oidc.buildAuthorizationUrl(configuration(settings, fetch), query).toString();
}

/** A fresh PKCE verifier and its S256 challenge. */
export async function pkcePair(): Promise<{ verifier: string; challenge: string }> {
  const verifier = oidc.randomPKCECodeVerifier();
  return { verifier, challenge: await oidc.calculatePKCECodeChallenge(verifier) };
}

/** What the host said when it refused a grant, without any body. */
function describe(error: unknown): { kind: "refused" | "unreachable" | "odd"; detail: string } {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current instanceof Error; depth += 1) {
    if (current instanceof NetworkTargetError || current instanceof HostLookupError) return { kind: "unreachable", detail: current.message };
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === "string" && /^E[A-Z]+$/.test(code) && code !== "ERR_INVALID_RESPONSE") return { kind: "unreachable", detail: code };
    if (current instanceof oidc.ResponseBodyError) {
      return { kind: "refused", detail: `${current.error}${current.error_description ? `: ${current.error_description.slice(0, 200)}` : ""}` };
    }
    current = current.cause;
  }
  // GitHub answers a refused code with 200 and {error}; oauth4webapi then finds no access_token.
  const body = (error as { cause?: { body?: { error?: unknown; error_description?: unknown } } }).cause?.body;
  if (body && typeof body.error === "string") return { kind: "refused", detail: `${body.error}${typeof body.error_description === "string" ? `: ${body.error_description.slice(0, 200)}` : ""}` };
  return { kind: "odd", detail: "the answer was not a token response" };
}

/** Maps a failed grant to an AppError (no cause kept). */
function grantFailure(settings: ProviderSettings, error: unknown, what: "code" | "refresh"): AppError {
  const name = providerNames[settings.provider];
  const { kind, detail } = describe(error);
  if (kind === "unreachable") return new AppError(502, "provider_unavailable", `${name} could not be reached (${detail}); try again later.`);
  if (what === "refresh") return new AppError(401, "git_reauthorization_required", `${name} refused to renew the connection's token (${detail}); connect the account again.`);
  return new AppError(422, "oauth_code_rejected", `${name} refused the authorization code (${detail}); start the sign-in again.`, { code: [`${name} refused the authorization code (${detail}).`] });
}

/** Reads a token endpoint response. */
function tokensOf(response: oidc.TokenEndpointResponse): TokenSet {
  const expiresIn = typeof response.expires_in === "number" ? response.expires_in : null;
  return {
    accessToken: response.access_token,
    refreshToken: typeof response.refresh_token === "string" ? response.refresh_token : null,
    expiresAt: expiresIn === null ? null : new Date(Date.now() + expiresIn * 1000),
    // Bitbucket names them `scopes`, a space-separated string like everyone's `scope`.
    scopes: typeof response.scope === "string" ? response.scope : typeof (response as unknown as { scopes?: unknown }).scopes === "string" ? (response as unknown as { scopes: string }).scopes : null,
  };
}

/**
 * Exchanges an authorization code. @throws AppError 422 `oauth_code_rejected`, 502 `provider_unavailable`
 */
export async function exchangeCode(settings: ProviderSettings, params: { code: string; state: string; redirectUri: string; verifier: string | null }, network: NetworkPolicy): Promise<TokenSet> {
  const guarded = createGuardedFetch(network);
  try {
    const callback = new URL(params.redirectUri);
    callback.searchParams.set("code", params.code);
    callback.searchParams.set("state", params.state);
    const response = await oidc.authorizationCodeGrant(configuration(settings, guarded.fetch), callback, {
      expectedState: params.state,
      ...(params.verifier ? { pkceCodeVerifier: params.verifier } : {}),
    });
    return tokensOf(response);
  } catch (error) {
    throw grantFailure(settings, error, "code");
  } finally {
    await guarded.close();
  }
}

/** Renews tokens with a refresh token. @throws AppError 401 `git_reauthorization_required`, 502 */
export async function refreshTokens(settings: ProviderSettings, refreshToken: string, network: NetworkPolicy): Promise<TokenSet> {
  const guarded = createGuardedFetch(network);
  try {
    return tokensOf(await oidc.refreshTokenGrant(configuration(settings, guarded.fetch), refreshToken));
  } catch (error) {
    throw grantFailure(settings, error, "refresh");
  } finally {
    await guarded.close();
  }
}
