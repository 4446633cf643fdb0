/**
 * Checking an e-mail and password, shared by POST /auth/login and the OAuth password
 * grant. Attempts are counted in LOGIN_LOCKOUT_S windows on two keys: the (e-mail, IP) pair
 * (LOGIN_MAX_ATTEMPTS) and the e-mail alone across every address (EMAIL_ATTEMPTS_FACTOR
 * times as many), so guesses spread over many addresses are slowed too. An attempt is
 * counted before the password is checked, atomically with the check of both limits; a
 * success clears its pair and takes its attempt back from the e-mail's count. The e-mail's
 * count does not apply from a known source (shared/auth/loginSources.ts), so nobody can lock
 * the owner out from where they usually sign in.
 */
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods, type DatabasePool } from "../db/pool.ts";
import { userColumns, userRow } from "../db/users.ts";
import type { AttemptCounter } from "../rateLimit.ts";
import type { DeviceIdentity } from "./loginChallenges.ts";
import { isKnownSource, recordLoginSource } from "./loginSources.ts";
import { hashPassword, needsRehash, verifyPassword } from "./passwords.ts";

export const loginUserRow = userRow.extend({
  password_hash: z.string().nullable(),
  password_changed_at: z.date().nullable(),
  two_factor_secret: z.instanceof(Buffer).nullable(),
  two_factor_confirmed_at: z.date().nullable(),
});
export type LoginUser = z.infer<typeof loginUserRow>;

/** The user with the secrets login needs (never presented). */
export async function findLoginUser(conn: CommonQueryMethods, where: { email: string } | { id: number }): Promise<LoginUser | null> {
  const condition = "email" in where ? sql.fragment`lower(u.email) = lower(${where.email})` : sql.fragment`u.id = ${where.id}`;
  return conn.maybeOne(sql.type(loginUserRow)`
    select ${userColumns}, u.password_hash, u.password_changed_at, u.two_factor_secret, u.two_factor_confirmed_at from users u where ${condition}`);
}

/**
 * Whether the password of `user` (a login row read with the password that was checked) is
 * still the account's. Call after the sign-in's token is minted and before it is answered: the
 * read waits for a password change in flight (shared/db/users.ts `setPassword` holds the row),
 * so a login racing a change either sees it here or minted its token before the change's
 * revocation time.
 */
export async function passwordStillCurrent(conn: CommonQueryMethods, user: Pick<LoginUser, "id" | "password_changed_at">): Promise<boolean> {
  const now = await conn.maybeOne(sql.type(z.object({ changed: z.date().nullable() }))`
    select password_changed_at as changed from users where id = ${user.id} for share`);
  return now !== null && (now.changed?.getTime() ?? null) === (user.password_changed_at?.getTime() ?? null);
}

export type CredentialResult =
  | { ok: true; user: LoginUser }
  | { ok: false; reason: "invalid" }
  | { ok: false; reason: "disabled" }
  | { ok: false; reason: "locked"; retryAfterS: number };

/** How many more attempts one e-mail gets across all addresses than one (e-mail, IP) pair. */
export const EMAIL_ATTEMPTS_FACTOR = 4;

const normalized = (email: string) => email.trim().toLowerCase();
const pairKey = (email: string, ip: string) => `login:${normalized(email)}|${ip}`;
const emailKey = (email: string) => `login-email:${normalized(email)}`;

/** Verifies `email` and `password` from `ip`, with lockout after repeated failures. */
export async function checkCredentials(
  deps: { pool: DatabasePool; attempts: AttemptCounter },
  email: string,
  password: string,
  ip: string,
  device: DeviceIdentity | null = null,
): Promise<CredentialResult> {
  const pair = pairKey(email, ip);
  const perEmail = emailKey(email);
  const max = deps.attempts.max;
  // From an address (or trusted device) the account signed in from lately, only the pair's limit applies.
  const known = await isKnownSource(deps.pool, email, ip, device);
  const taken = await deps.attempts.take([{ key: pair, max }, ...(known ? [] : [{ key: perEmail, max: max * EMAIL_ATTEMPTS_FACTOR }])]);
  if (!taken.allowed) return { ok: false, reason: "locked", retryAfterS: taken.retryAfterS };
  const user = await findLoginUser(deps.pool, { email });
  const valid = await verifyPassword(user?.password_hash ?? null, password);
  if (!user || !valid) return { ok: false, reason: "invalid" };
  await deps.attempts.reset(pair);
  // Only after the password matched, so the answer tells a disabled account apart only to its owner.
  if (user.disabled_at) return { ok: false, reason: "disabled" };
  if (!known) await deps.attempts.giveBack(perEmail, taken.windowStart);
  await recordLoginSource(deps.pool, user.id, ip);
  if (user.password_hash && needsRehash(user.password_hash)) {
    const rehashed = await hashPassword(password);
    await deps.pool.query(sql.type(ignoredRow)`update users set password_hash = ${rehashed} where id = ${user.id}`);
  }
  return { ok: true, user };
}
