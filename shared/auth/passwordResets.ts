/**
 * Password reset tokens: random, e-mailed once, stored only as a SHA-256 hash, valid 60
 * minutes and for one use; asking again replaces the previous token.
 */
import { z } from "zod";
import { randomToken, safeEqual, sha256 } from "../crypto.ts";
import { ignoredRow, sql, type CommonQueryMethods } from "../db/pool.ts";

export const RESET_TTL_S = 60 * 60;

/** Creates (or replaces) the reset token of a user; returns the plain token for the e-mail. */
export async function createResetToken(conn: CommonQueryMethods, userId: number): Promise<string> {
  const token = randomToken(32);
  await conn.query(sql.type(ignoredRow)`
    insert into password_resets (user_id, token_hash, expires_at)
    values (${userId}, ${sql.binary(sha256(token))}, now() + make_interval(secs => ${RESET_TTL_S}))
    on conflict (user_id) do update set token_hash = excluded.token_hash, expires_at = excluded.expires_at, created_at = now()`);
  return token;
}

/** Consumes a user's reset token; resolves to whether it was valid (it is gone either way if it matched). */
export async function consumeResetToken(conn: CommonQueryMethods, userId: number, token: string): Promise<boolean> {
  const row = await conn.maybeOne(sql.type(z.object({ token_hash: z.instanceof(Buffer), expired: z.boolean() }))`
    select token_hash, expires_at < now() as expired from password_resets where user_id = ${userId} for update`);
  if (!row || !safeEqual(row.token_hash, sha256(token))) return false;
  await conn.query(sql.type(ignoredRow)`delete from password_resets where user_id = ${userId}`);
  return !row.expired;
}
