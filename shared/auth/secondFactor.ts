/**
 * Checking a second factor (a TOTP code, or a recovery code used once) for a user who has
 * two-factor authentication on, wherever one is asked: login, the password grant and the
 * re-checks of sensitive changes.
 */
import { openText } from "../crypto.ts";
import type { DatabasePool } from "../db/pool.ts";
import type { AttemptCounter } from "../rateLimit.ts";
import type { LoginUser } from "./credentials.ts";
import { consumeTotpStep, matchTotp, useRecoveryCode } from "./twoFactor.ts";

export interface SecondFactorOutcome {
  accepted: boolean;
  recoveryUsed: boolean;
}

/** Checks `code` (TOTP, or a recovery code when it is not six digits) for `user`. */
export async function checkSecondFactor(
  deps: { pool: DatabasePool; attempts: AttemptCounter; appKey: Buffer },
  user: LoginUser,
  code: string,
): Promise<SecondFactorOutcome | "locked"> {
  if (!user.two_factor_secret) return { accepted: false, recoveryUsed: false };
  const clean = code.replace(/\s+/g, "");
  const step = /^\d{6}$/.test(clean) ? matchTotp(openText(deps.appKey, user.two_factor_secret), clean) : null;
  if (step !== null) return { accepted: await consumeTotpStep(deps.pool, user.id, step), recoveryUsed: false };
  if (/^\d{6}$/.test(clean)) return { accepted: false, recoveryUsed: false };
  const used = await useRecoveryCode(deps.pool, user.id, clean);
  return { accepted: used, recoveryUsed: used };
}
