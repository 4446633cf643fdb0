/**
 * What the login-like routes answer: an access token of the first-party client for the
 * user (24 hours, as the spec's /auth/login reports), with the user resource.
 */
import { passwordStillCurrent, type LoginUser } from "../../../shared/auth/credentials.ts";
import type { UserRow } from "../../../shared/db/users.ts";
import type { AppDeps } from "../../context.ts";
import { presentUser } from "../../presenters/user.ts";
import { hasPendingInvitation } from "../../../shared/teams/invitations.ts";
import { awardMonthlyCredits } from "../../../shared/credits/monthly.ts";

export const LOGIN_TOKEN_TTL_S = 86_400;

/**
 * `user` is the login row read with the password that was checked: once the token is minted,
 * that password must still be the account's (`passwordStillCurrent`), else the sign-in raced a
 * password change and `stale()` is thrown instead. `awardMonthly`: a sign-in by password (with
 * or without a second factor) awards the month's credits the first time.
 */
export async function loginResponse(deps: AppDeps, user: UserRow & Pick<LoginUser, "password_changed_at">, message: string, stale: () => Error, awardMonthly = true) {
  const minted = await deps.identity.mintUserToken(user, LOGIN_TOKEN_TTL_S);
  if (!(await passwordStillCurrent(deps.pool, user))) throw stale();
  return {
    message,
    user: presentUser(user),
    access_token: minted.token,
    token_type: "Bearer" as const,
    expires_in: minted.expiresIn,
    has_pending_invitation: await hasPendingInvitation(deps.pool, user),
    monthly_credits_awarded: awardMonthly ? await awardMonthlyCredits(deps.pool, user.id) : false,
  };
}
