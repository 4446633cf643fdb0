/**
 * Bearer authentication for protected routes: `Authorization: Bearer <token>`, where the
 * token is an OAuth access token (RS256 JWT) or a personal API token (`<id>|<secret>`).
 * A JWT must verify (signature, typ, issuer, audience, expiry, not-before), its user must
 * exist, it must not be revoked by /logout, the OAuth grant it was issued under (if any) must
 * still exist (a replayed refresh token revokes the grant), and it must be younger than the
 * user's `tokens_revoked_at` (logout-all-devices, password change). The user's row is read
 * on every request; the revocation checks are remembered per token (api/oauth/passedTokens.ts). Anything else answers 401;
 * failed attempts count against the caller's IP budget, so token guessing is limited.
 *
 * A valid token then needs the scope of the route (`requireScope`, shared/auth/scopes.ts):
 * its OAuth `scope` claim or its personal-token abilities. Without `admin`, the request
 * runs with the user's administrator roles set aside, so every policy follows the token.
 */
import type { Next } from "koa";
import { z } from "zod";
import { touchPersonalToken, verifyPersonalTokenWithUser, looksLikePersonalToken } from "../../shared/auth/personalTokens.ts";
import { effectiveScopes, hasScope, rolesInEffect, type Scope } from "../../shared/auth/scopes.ts";
import { sql } from "../../shared/db/pool.ts";
import { userColumns, userRow, type UserRow } from "../../shared/db/users.ts";
import { AppError, unauthorized } from "../../shared/errors.ts";
import type { AppContext, AppDeps, AuthMethod, TokenScopes } from "../context.ts";
import { issuedAtMs, type AccessClaims } from "../oauth/accessTokens.ts";
import { chargeIp } from "./rateLimit.ts";

export interface Authenticated {
  user: UserRow;
  auth: AuthMethod;
}

/** Reads the bearer token of a request, if any. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S{10,4096})\s*$/i.exec(header ?? "");
  return match?.[1];
}

/** The user as this token may act (administrator roles only with `admin`), and the token's scopes (also for realtime re-checks). */
export function scoped(user: UserRow, names: readonly string[]): { user: UserRow } & TokenScopes {
  const scopes = effectiveScopes(names, user.roles);
  const roles = rolesInEffect(user.roles, scopes);
  return { user: { ...user, roles }, scopes, withheldRoles: user.roles.filter((role) => !roles.includes(role)) };
}

const userWithEpoch = userRow.extend({ token_epoch: z.number() });
const userWithRevocation = userWithEpoch.extend({ revoked: z.boolean(), grant_account: z.string().nullable() });

/**
 * The user of a JWT and whether the token still stands. A token that passed the revocation
 * checks before (api/oauth/passedTokens.ts) costs one read of its user's row, trusted while
 * the row's token_epoch is the one seen then; otherwise one round trip reads the user,
 * whether this token was revoked by /logout, and the OAuth grant it came from (a replayed
 * refresh token revokes its whole family, the access tokens included). Both are named
 * prepared statements: planning cost as much as executing.
 */
async function loadJwtUser(deps: AppDeps, claims: AccessClaims): Promise<UserRow | null> {
  const userId = Number(claims.sub);
  const passed = deps.identity.passedTokens.get(claims.jti, userId);
  if (passed) {
    const row = await deps.pool.maybeOne(sql.prepared("authenticate_jwt_user", userWithEpoch)`
      select ${userColumns}, u.token_epoch from users u where u.id = ${userId}`);
    if (!row) return null;
    if (row.token_epoch === passed.epoch) {
      const { token_epoch: _epoch, ...user } = row;
      return user;
    }
    deps.identity.passedTokens.forget(claims.jti);
  }
  const gid = claims.gid ?? null;
  const row = await deps.pool.maybeOne(sql.prepared("authenticate_jwt_user_checks", userWithRevocation)`
    select ${userColumns}, u.token_epoch, exists (select 1 from revoked_access_tokens where jti = ${claims.jti}) as revoked,
      (select account_id from oauth_models where model = 'Grant' and id = ${gid}::text) as grant_account
    from users u where u.id = ${userId}`);
  if (!row || row.revoked || (gid !== null && row.grant_account === null)) return null;
  const { token_epoch: epoch, revoked: _revoked, grant_account: grantAccount, ...user } = row;
  // Only a grant of this very user is covered by its epoch (the grant's deletion bumps its account's).
  if (gid === null || grantAccount === claims.sub) {
    deps.identity.passedTokens.remember(claims.jti, { userId, epoch, expiresAtMs: claims.exp * 1000 });
  }
  return user;
}

async function resolveJwt(deps: AppDeps, token: string, verified?: AccessClaims): Promise<Authenticated | null> {
  const claims = verified ?? (await deps.identity.verifier.verify(token));
  if (!claims) return null;
  const user = await loadJwtUser(deps, claims);
  if (!user || user.disabled_at) return null;
  if (user.tokens_revoked_at && issuedAtMs(claims) < user.tokens_revoked_at.getTime()) return null;
  const clientId = claims.client_id ?? (Array.isArray(claims.aud) ? claims.aud[0]! : claims.aud!);
  const scope = typeof claims.scope === "string" ? claims.scope : "";
  const { user: acting, ...scopes } = scoped(user, scope.split(" "));
  return {
    user: acting,
    auth: { kind: "jwt", jti: claims.jti, scope, clientId, expiresAt: new Date(claims.exp * 1000), grantId: claims.gid ?? null, ...scopes },
  };
}

/** Resolves a bearer token to its user, or null when it is not valid. */
export async function resolveBearer(deps: AppDeps, token: string): Promise<Authenticated | null> {
  if (!looksLikePersonalToken(token)) return resolveJwt(deps, token);
  const found = await verifyPersonalTokenWithUser(deps.pool, token);
  if (!found) return null;
  const { token: row, user } = found;
  if (user.disabled_at) return null;
  if (user.tokens_revoked_at && row.created_at.getTime() < user.tokens_revoked_at.getTime()) return null;
  touchPersonalToken(deps.pool, row).catch((error: unknown) => deps.log.warn({ err: error }, "could not record token use"));
  const { user: acting, ...scopes } = scoped(user, row.abilities);
  return { user: acting, auth: { kind: "personal_token", tokenId: row.id, abilities: row.abilities, ...scopes } };
}

const BEARER = "Bearer ";

/**
 * Koa middleware: 401 unless the request carries a valid bearer token. A client sends the same
 * header with every request: when what follows `Bearer ` is a token whose signature verified
 * before, it is taken as it is, without the header's expression (3 µs on a 900-character JWT)
 * or the verifier's promise; every check after the signature still runs.
 */
export async function authenticate(ctx: AppContext, next: Next): Promise<void> {
  const header = ctx.get("authorization");
  const known = header.startsWith(BEARER) ? ctx.deps.identity.verifier.verifiedNow(header.slice(BEARER.length)) : undefined;
  const token = known ? header.slice(BEARER.length) : bearerToken(header);
  const result = known ? await resolveJwt(ctx.deps, token!, known) : token ? await resolveBearer(ctx.deps, token) : null;
  if (!result) {
    await chargeIp(ctx);
    throw token ? unauthorized("The access token is invalid or has expired.") : unauthorized();
  }
  ctx.state.user = result.user;
  ctx.state.auth = result.auth;
  await next();
}

/**
 * What a route needs of a token: `none` for the few routes any valid token may call
 * (POST /logout), `read` or `write`, plus `admin` for administrator-only routes.
 */
export interface RouteScope {
  scope: Scope | "none";
  admin: boolean;
}

/** 403 `insufficient_scope`, with the RFC 6750 challenge naming the missing scope. */
export function insufficientScope(scope: Scope, message: string): AppError {
  return new AppError(403, "insufficient_scope", message, undefined, {
    "WWW-Authenticate": `Bearer realm="api", error="insufficient_scope", scope="${scope}"`,
  });
}

/**
 * Koa middleware after `authenticate`: 403 `insufficient_scope` unless the token holds the
 * route's scope. On administrator routes a token without `admin` is refused here only when
 * its user is an administrator; for anyone else the route's own role check answers.
 */
export function requireScope(needed: RouteScope) {
  // Not async: a route's middleware that needs no await passes the request on without a promise of its own.
  return (ctx: AppContext, next: Next): Promise<void> => {
    const auth = ctx.state.auth;
    if (!auth) throw new Error("requireScope must follow authenticate");
    if (needed.scope !== "none" && !hasScope(auth.scopes, needed.scope)) {
      const kind = needed.scope === "read" ? "read" : "change";
      throw insufficientScope(needed.scope, `This token lacks the ${needed.scope} scope, which is needed to ${kind} data; use a token with it (scope \`*\` grants every scope your roles allow).`);
    }
    if (needed.admin && !auth.scopes.includes("admin") && auth.withheldRoles.length > 0) {
      throw insufficientScope("admin", "This token lacks the admin scope, which administrator routes need; use a token with it (scope `*` grants every scope your roles allow).");
    }
    return next();
  };
}
