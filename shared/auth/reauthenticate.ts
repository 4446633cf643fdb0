/**
 * Re-checking a signed-in user before a change that could hand the account to someone else
 * (e-mail, password, two-factor, closing the account): a bearer token alone may have been
 * stolen, so the current password is asked again, and the second factor when the account
 * uses one. Wrong passwords count against the same failed-password limit as login (per
 * e-mail and address, and per e-mail across addresses), so re-checks are no way around it.
 */
import type { DatabasePool } from "../db/pool.ts";
import { AppError, invalid, type FieldErrors } from "../errors.ts";
import type { AttemptCounter } from "../rateLimit.ts";
import { checkCredentials, type LoginUser } from "./credentials.ts";
import { checkSecondFactor } from "./secondFactor.ts";

export interface ReauthDeps {
  pool: DatabasePool;
  attempts: AttemptCounter;
  appKey: Buffer;
}

export interface ReauthInput {
  /** The password as the request sent it (undefined when it sent none). */
  password: string | undefined;
  /** The request field that carries it (`password`, `current_password`). */
  passwordField: string;
  /** The second-factor code (TOTP or recovery code); asked for only when `codeField` is given and the account uses 2FA. */
  code?: string | undefined;
  codeField?: string;
}

/** 429 with Retry-After, as login answers a locked e-mail. */
export function tooManyAttempts(retryAfterS: number, what = "login"): AppError {
  return new AppError(429, "too_many_attempts", `Too many failed ${what} attempts. Please try again in ${retryAfterS} seconds.`, undefined, {
    "Retry-After": String(retryAfterS),
  });
}

/**
 * Checks the password (and second factor) of `user` from `ip`; resolves to the user's login row.
 * @throws 422 on the field at fault (missing or wrong), 429 when the failed-password or second-factor limit is reached.
 */
export async function reauthenticate(deps: ReauthDeps, user: { id: number; email: string }, ip: string, input: ReauthInput): Promise<LoginUser> {
  const missing: FieldErrors = {};
  if (!input.password) missing[input.passwordField] = [`The ${input.passwordField.replace(/_/g, " ")} field is required to make this change.`];
  if (Object.keys(missing).length) throw invalid(missing);
  const result = await checkCredentials(deps, user.email, input.password!, ip);
  if (!result.ok && result.reason === "locked") throw tooManyAttempts(result.retryAfterS);
  if (!result.ok || result.user.id !== user.id) {
    const label = input.passwordField === "password" ? "password" : input.passwordField.replace(/_/g, " ");
    throw invalid({ [input.passwordField]: [`The ${label} is incorrect.`] });
  }
  const login = result.user;
  if (input.codeField && login.two_factor_confirmed_at && login.two_factor_secret) {
    const field = input.codeField;
    if (!input.code) throw invalid({ [field]: ["This account uses two-factor authentication: give a current code from the app or a recovery code."] });
    const outcome = await checkSecondFactor(deps, deps.pool, login, input.code);
    if ("locked" in outcome) throw tooManyAttempts(outcome.retryAfterS, "two-factor");
    if (!outcome.accepted) throw invalid({ [field]: ["The two-factor code is invalid."] });
  }
  return login;
}
