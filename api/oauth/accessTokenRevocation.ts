/**
 * RFC 7009 revocation of access tokens at POST /api/oauth/token/revocation. oidc-provider
 * revokes only the tokens it stores (refresh tokens); it answers a structured (JWT) access
 * token with 400 `unsupported_token_type` and leaves it working, so a client that revoked a
 * leaked access token, as the discovery document's `revocation_endpoint` invites, kept it
 * valid for its hour. Such a request is handled here instead: the client authenticates as at
 * the token endpoint (`client_id` and `client_secret` in the body), and a valid token of that
 * client is refused from then on, as POST /logout refuses its own token. As RFC 7009 asks, a
 * token that is invalid, expired or not ours answers 200 too; another client's token is
 * `invalid_request`, as oidc-provider answers for the tokens it stores.
 */
import { decodeProtectedHeader } from "jose";
import type { AppContext } from "../context.ts";
import { revokeAccessToken } from "../../shared/db/oauth.ts";

export const REVOCATION_PATH = "/token/revocation";

/** Whether `token` has a JWS header, i.e. is a structured token oidc-provider will not revoke. */
function isStructured(token: string): boolean {
  try {
    return Boolean(decodeProtectedHeader(token));
  } catch {
    return false;
  }
}

/** An OAuth error answer (bad client credentials are 400, as at the token endpoint). */
function oauthError(ctx: AppContext, error: string, description: string): void {
  ctx.status = 400;
  ctx.body = { error, error_description: description };
}

/**
 * Handles the revocation of a JWT access token; returns false (nothing answered) when the
 * request is not one, so oidc-provider serves it.
 */
export async function revokeStructuredAccessToken(ctx: AppContext, form: URLSearchParams): Promise<boolean> {
  const token = form.get("token");
  if (!token || !isStructured(token)) return false;
  const { identity, pool } = ctx.deps;
  ctx.set("Cache-Control", "no-store");
  const clientId = form.get("client_id");
  const secret = form.get("client_secret");
  const client = clientId ? await identity.provider.Client.find(clientId) : undefined;
  if (!client || !secret || !(await client.compareClientSecret(secret))) {
    oauthError(ctx, "invalid_client", "client authentication failed");
    return true;
  }
  const claims = await identity.verifier.verify(token);
  if (claims) {
    const audience = Array.isArray(claims.aud) ? claims.aud[0] : claims.aud;
    if (audience !== client.clientId) {
      oauthError(ctx, "invalid_request", "client is not authorized to revoke the presented token");
      return true;
    }
    await revokeAccessToken(pool, claims.jti, Number(claims.sub), new Date(claims.exp * 1000));
  }
  ctx.status = 200;
  ctx.body = "";
  return true;
}
