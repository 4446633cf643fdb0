/**
 * Bearer authentication for protected routes: `Authorization: Bearer <token>`, where the
 * token is a personal API token (`<id>|<secret>`) or an OAuth access token (a JWT, once the
 * identity layer registers its verifier). Anything else answers 401.
 */
import type { Next } from "koa";
import { touchPersonalToken, verifyPersonalToken, looksLikePersonalToken } from "../../shared/auth/personalTokens.ts";
import { findUserById, type UserRow } from "../../shared/db/users.ts";
import { unauthorized } from "../../shared/errors.ts";
import type { AppContext, AppDeps, AuthMethod } from "../context.ts";

export interface Authenticated {
  user: UserRow;
  auth: AuthMethod;
}

/** Verifies a non-personal bearer token (the OAuth JWT verifier). */
export type TokenVerifier = (deps: AppDeps, token: string) => Promise<Authenticated | null>;

const verifiers: TokenVerifier[] = [];

/** Adds a verifier for bearer tokens that are not personal tokens. */
export function registerTokenVerifier(verifier: TokenVerifier): void {
  verifiers.push(verifier);
}

/** Reads the bearer token of a request, if any. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S{10,4096})\s*$/i.exec(header ?? "");
  return match?.[1];
}

/** Resolves a bearer token to its user, or null when it is not valid. */
export async function resolveBearer(deps: AppDeps, token: string): Promise<Authenticated | null> {
  if (looksLikePersonalToken(token)) {
    const row = await verifyPersonalToken(deps.pool, token);
    if (!row) return null;
    const user = await findUserById(deps.pool, row.user_id);
    if (!user) return null;
    if (user.tokens_revoked_at && row.created_at.getTime() < user.tokens_revoked_at.getTime()) return null;
    touchPersonalToken(deps.pool, row).catch((error: unknown) => deps.log.warn({ err: error }, "could not record token use"));
    return { user, auth: { kind: "personal_token", tokenId: row.id, abilities: row.abilities } };
  }
  for (const verify of verifiers) {
    const result = await verify(deps, token);
    if (result) return result;
  }
  return null;
}

/** Koa middleware: 401 unless the request carries a valid bearer token. */
export async function authenticate(ctx: AppContext, next: Next): Promise<void> {
  const token = bearerToken(ctx.get("authorization"));
  if (!token) throw unauthorized();
  const result = await resolveBearer(ctx.deps, token);
  if (!result) throw unauthorized("The access token is invalid or has expired.");
  ctx.state.user = result.user;
  ctx.state.auth = result.auth;
  ctx.state.log = ctx.state.log.child({ user_id: result.user.id });
  await next();
}
