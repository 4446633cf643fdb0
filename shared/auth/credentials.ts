/**
 * Checking an e-mail and password, shared by POST /auth/login and the OAuth password
 * grant: failed attempts are counted per e-mail and IP and lock that pair out for a while
 * (LOGIN_MAX_ATTEMPTS per LOGIN_LOCKOUT_S); a success clears the count.
 */
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods, type DatabasePool } from "../db/pool.ts";
import { userColumns, userRow } from "../db/users.ts";
import type { AttemptCounter } from "../rateLimit.ts";
import { hashPassword, needsRehash, verifyPassword } from "./passwords.ts";

export const loginUserRow = userRow.extend({
  password_hash: z.string().nullable(),
  two_factor_secret: z.instanceof(Buffer).nullable(),
  two_factor_confirmed_at: z.date().nullable(),
});
export type LoginUser = z.infer<typeof loginUserRow>;

/** The user with the secrets login needs (never presented). */
export async function findLoginUser(conn: CommonQueryMethods, where: { email: string } | { id: number }): Promise<LoginUser | null> {
  const condition = "email" in where ? sql.fragment`lower(u.email) = lower(${where.email})` : sql.fragment`u.id = ${where.id}`;
  return conn.maybeOne(sql.type(loginUserRow)`
    select ${userColumns}, u.password_hash, u.two_factor_secret, u.two_factor_confirmed_at from users u where ${condition}`);
}

export type CredentialResult =
  | { ok: true; user: LoginUser }
  | { ok: false; reason: "invalid" }
  | { ok: false; reason: "locked"; retryAfterS: number };

const attemptKey = (email: string, ip: string) => `login:${email.trim().toLowerCase()}|${ip}`;

/** Verifies `email` and `password` from `ip`, with lockout after repeated failures. */
export async function checkCredentials(
  deps: { pool: DatabasePool; attempts: AttemptCounter },
  email: string,
  password: string,
  ip: string,
): Promise<CredentialResult> {
  const key = attemptKey(email, ip);
  const lockedFor = await deps.attempts.lockedFor(key);
  if (lockedFor > 0) return { ok: false, reason: "locked", retryAfterS: lockedFor };
  const user = await findLoginUser(deps.pool, { email });
  const valid = await verifyPassword(user?.password_hash ?? null, password);
  if (!user || !valid) {
    await deps.attempts.fail(key);
    return { ok: false, reason: "invalid" };
  }
  await deps.attempts.reset(key);
  if (user.password_hash && needsRehash(user.password_hash)) {
    const rehashed = await hashPassword(password);
    await deps.pool.query(sql.type(ignoredRow)`update users set password_hash = ${rehashed} where id = ${user.id}`);
  }
  return { ok: true, user };
}
