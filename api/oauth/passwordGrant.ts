/**
 * The OAuth password grant (RFC 6749 §4.3) registered on oidc-provider: the client is
 * already authenticated by the token endpoint; here the user's e-mail and password are
 * checked (with the failed-login lockout), a grant is recorded, and an access token (JWT)
 * plus a refresh token are issued. Scope `*` (or none) means every scope the user may
 * hold: read and write, and admin for site administrators.
 * A user with two-factor authentication must add the current code as parameter `otp`.
 */
import { errors, type KoaContextWithOIDC } from "oidc-provider";
import { checkCredentials, passwordStillCurrent } from "../../shared/auth/credentials.ts";
import { allowedScopes } from "../../shared/auth/scopes.ts";
import { checkSecondFactor } from "../../shared/auth/secondFactor.ts";
import type { ProviderDeps } from "./provider.ts";
import { API_RESOURCE, resourceServerInfo } from "./provider.ts";

export const passwordGrantParameters = ["username", "password", "scope", "otp"];

class TooManyAttempts extends errors.CustomOIDCProviderError {
  constructor(retryAfterS: number) {
    super("too_many_attempts", `Too many failed login attempts; try again in ${retryAfterS} seconds.`);
    this.status = 429;
    this.statusCode = 429;
  }
}

/**
 * `invalid_grant` that says why: the password was right and the account uses two-factor
 * authentication (oidc-provider's own InvalidGrant answers "grant request is invalid" only,
 * so a client could not tell a missing code from a wrong password). Said only after the
 * password matched, as /auth/login answers `two_factor_required`.
 */
class SecondFactorRequired extends errors.CustomOIDCProviderError {
  constructor() {
    super("invalid_grant", "this account uses two-factor authentication: send a current code from the app in parameter otp");
  }
}

function grantedScopes(requested: string | undefined, roles: readonly string[]): string[] {
  const allowed: string[] = allowedScopes(roles);
  const wanted = !requested || requested.trim() === "*" ? allowed : [...new Set(requested.split(/\s+/).filter(Boolean))];
  const unknown = wanted.filter((s) => !allowed.includes(s));
  if (unknown.length) throw new errors.InvalidScope(`scope not allowed: ${unknown.join(" ")}`, unknown.join(" "));
  return wanted;
}

/** Builds the grant handler. */
export function passwordGrant(deps: ProviderDeps) {
  return async (ctx: KoaContextWithOIDC & { oidc: { params?: Record<string, unknown> } }) => {
    const provider = ctx.oidc.provider;
    const params = ctx.oidc.params as Record<string, string | undefined>;
    const client = ctx.oidc.client!;
    if (!params.username || !params.password) throw new errors.InvalidRequest("username and password are required");

    const result = await checkCredentials(deps, params.username, params.password, ctx.ip);
    if (!result.ok) {
      if (result.reason === "locked") {
        ctx.set("Retry-After", String(result.retryAfterS));
        throw new TooManyAttempts(result.retryAfterS);
      }
      throw new errors.InvalidGrant(result.reason === "disabled" ? "the account is disabled" : "invalid credentials");
    }
    const user = result.user;
    if (user.two_factor_confirmed_at && user.two_factor_secret) {
      if (!params.otp || !/^\d{6}$/.test(params.otp.trim())) throw new SecondFactorRequired();
      const checked = await checkSecondFactor({ attempts: deps.attempts, appKey: deps.config.appKey }, deps.pool, user, params.otp);
      if ("locked" in checked) {
        ctx.set("Retry-After", String(checked.retryAfterS));
        throw new TooManyAttempts(checked.retryAfterS);
      }
      if (!checked.accepted) throw new SecondFactorRequired();
    }

    const scopes = grantedScopes(params.scope, user.roles);
    const accountId = String(user.id);
    const grant = new provider.Grant({ accountId, clientId: client.clientId });
    grant.addResourceScope(API_RESOURCE, scopes.join(" "));
    const grantId = await grant.save();

    const resourceServer = new provider.ResourceServer(API_RESOURCE, resourceServerInfo(client.clientId));
    const accessToken = new provider.AccessToken({ accountId, client, grantId, gty: "password", scope: scopes.join(" ") });
    accessToken.resourceServer = resourceServer;
    const refreshToken = new provider.RefreshToken({
      accountId,
      client,
      grantId,
      gty: "password",
      scope: scopes.join(" "),
      resource: API_RESOURCE,
      iiat: Math.floor(Date.now() / 1000),
      rotations: 0,
    });
    const body = {
      token_type: "Bearer",
      expires_in: accessToken.expiration,
      access_token: await accessToken.save(),
      refresh_token: await refreshToken.save(),
      scope: scopes.join(" "),
    };
    // Minted with a password a change in flight replaced (shared/auth/credentials.ts): refused, and its grant goes.
    if (!(await passwordStillCurrent(deps.pool, user))) {
      await grant.destroy();
      throw new errors.InvalidGrant("invalid credentials");
    }
    ctx.body = body;
  };
}
