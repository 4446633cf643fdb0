/**
 * Checking a second factor (a TOTP code, or a recovery code used once) for a user who has
 * two-factor authentication on, wherever one is asked: /auth/login-2fa, the password
 * grant's `otp` and the re-checks of sensitive changes.
 *
 * Failures are counted per account across addresses, grants and login challenges
 * (SECOND_FACTOR_MAX_FAILURES per LOGIN_LOCKOUT_S window): a new challenge or another
 * address starts no new count, so a six-digit code cannot be guessed by many tries. Like
 * login attempts, a try is counted before the code is checked and taken back on success.
 */
import { openText } from "../crypto.ts";
import type { CommonQueryMethods } from "../db/pool.ts";
import type { AttemptCounter } from "../rateLimit.ts";
import type { LoginUser } from "./credentials.ts";
import { consumeTotpStep, matchTotp, useRecoveryCode } from "./twoFactor.ts";

/** Failed second factors an account may have per window before every further try is refused. */
export const SECOND_FACTOR_MAX_FAILURES = 10;

export type SecondFactorOutcome = { accepted: boolean; recoveryUsed: boolean } | { locked: true; retryAfterS: number };

const accountKey = (userId: number) => `second-factor:${userId}`;

/** Checks `code` (TOTP, or a recovery code when it is not six digits) for `user`, on `conn`. */
export async function checkSecondFactor(
  deps: { attempts: AttemptCounter; appKey: Buffer },
  conn: CommonQueryMethods,
  user: LoginUser,
  code: string,
): Promise<SecondFactorOutcome> {
  const key = accountKey(user.id);
  const taken = await deps.attempts.take([{ key, max: SECOND_FACTOR_MAX_FAILURES }], conn);
  if (!taken.allowed) return { locked: true, retryAfterS: taken.retryAfterS };
  const outcome = await verify(deps.appKey, conn, user, code);
  if (outcome.accepted) await deps.attempts.giveBack(key, taken.windowStart, conn);
  return outcome;
}

async function verify(appKey: Buffer, conn: CommonQueryMethods, user: LoginUser, code: string) {
  if (!user.two_factor_secret) return { accepted: false, recoveryUsed: false };
  const clean = code.replace(/\s+/g, "");
  if (/^\d{6}$/.test(clean)) {
    const step = matchTotp(openText(appKey, user.two_factor_secret), clean);
    return { accepted: step !== null && (await consumeTotpStep(conn, user.id, step)), recoveryUsed: false };
  }
  const used = await useRecoveryCode(conn, user.id, clean);
  return { accepted: used, recoveryUsed: used };
}
