/**
 * Registration and login: POST /auth/register, /auth/login (with the two-factor branch)
 * and /auth/login-2fa.
 */
import { z } from "zod";
import { checkCredentials, findLoginUser, passwordStillCurrent } from "../../../shared/auth/credentials.ts";
import { verificationLink } from "../../../shared/auth/emailVerification.ts";
import { closeChallenge, createChallenge, deviceTrust, findOpenChallenge, recordWrongCode, trustDevice } from "../../../shared/auth/loginChallenges.ts";
import { hashPassword } from "../../../shared/auth/passwords.ts";
import { tooManyAttempts } from "../../../shared/auth/reauthenticate.ts";
import { checkSecondFactor } from "../../../shared/auth/secondFactor.ts";
import { remainingRecoveryCodes } from "../../../shared/auth/twoFactor.ts";
import { emailTaken, freeUsername, insertUser, usernameTaken } from "../../../shared/db/users.ts";
import { AppError, invalid } from "../../../shared/errors.ts";
import { enqueueMail } from "../../../shared/mail/enqueueMail.ts";
import { claimInvitation, hasPendingInvitation, invitationValid } from "../../../shared/teams/invitations.ts";
import { presentUser, userResource } from "../../presenters/user.ts";
import { defineRoute } from "../route.ts";
import { login2faBody, loginBody, registerBody, tokenResponse, twoFactorRequiredResponse } from "./auth.schema.ts";
import { loginResponse } from "./session.ts";

const wrongCredentials = () => invalid({ email: ["These credentials do not match our records."] });
const expiredChallenge = () => invalid({ two_factor_token: ["The two-factor session has expired or is invalid; log in again."] });

const register = defineRoute({
  method: "post",
  path: "/auth/register",
  summary: "Create an account (a verification e-mail is sent)",
  tags: ["Authentication"],
  auth: "public",
  body: registerBody,
  responses: {
    201: {
      description: "Registered",
      schema: z.object({ message: z.string(), user: userResource, email_verification_required: z.boolean(), has_pending_invitation: z.boolean() }),
    },
    403: { description: "Registration is closed by the administrators (`registration_closed`)" },
  },
  handler: async (ctx, { body }) => {
    const { pool, config } = ctx.deps;
    const settings = await ctx.deps.settings.get();
    if (!settings.registration_open) throw new AppError(403, "registration_closed", "Registration is closed at the moment.");
    const errors: Record<string, string[]> = {};
    if (await emailTaken(pool, body.email)) errors.email = ["The email has already been taken."];
    if (body.username && (await usernameTaken(pool, body.username))) errors.username = ["The username has already been taken."];
    if (body.invitation_token && !(await invitationValid(pool, body.invitation_token, body.email))) {
      errors.invitation_token = ["The invitation is invalid, expired, or addressed to another e-mail address."];
    }
    if (Object.keys(errors).length) throw invalid(errors);
    const passwordHash = await hashPassword(body.password);
    const user = await pool.transaction(async (tx) => {
      const username = body.username ?? (await freeUsername(tx, body.email.split("@")[0]!));
      const created = await insertUser(tx, { name: body.name, username, email: body.email, passwordHash, language: body.language ?? settings.default_language });
      if (body.invitation_token) await claimInvitation(tx, body.invitation_token, created.email, created.id);
      await enqueueMail(tx, {
        to: created.email,
        kind: "verify_email",
        locale: created.language,
        params: { name: created.name },
        link: verificationLink(config.frontendUrl, config.appKey, created),
        userId: created.id,
      });
      return created;
    });
    ctx.status = 201;
    ctx.body = {
      message: "Registration successful. Please check your e-mail to verify your address.",
      user: presentUser(user),
      email_verification_required: true,
      has_pending_invitation: await hasPendingInvitation(pool, user),
    };
  },
});

const login = defineRoute({
  method: "post",
  path: "/auth/login",
  summary: "Log in with e-mail and password (24-hour access token, or a two-factor challenge)",
  tags: ["Authentication"],
  auth: "public",
  body: loginBody,
  responses: {
    200: { description: "Logged in, or the second factor is needed", schema: z.union([tokenResponse, twoFactorRequiredResponse]) },
    403: { description: "The account is disabled by an administrator" },
    429: { description: "Too many failed attempts for this e-mail, from this address or from all addresses together" },
  },
  handler: async (ctx, { body }) => {
    const { pool, identity } = ctx.deps;
    const device = { deviceId: body.device_id ?? null, browser: body.browser ?? null };
    const result = await checkCredentials({ pool, attempts: identity.attempts }, body.email, body.password, ctx.ip, device);
    if (!result.ok) {
      if (result.reason === "locked") {
        throw new AppError(429, "too_many_attempts", `Too many login attempts. Please try again in ${result.retryAfterS} seconds.`, undefined, {
          "Retry-After": String(result.retryAfterS),
        });
      }
      if (result.reason === "disabled") throw new AppError(403, "account_disabled", "This account is disabled; contact the administrators.");
      throw wrongCredentials();
    }
    const user = result.user;
    if (user.two_factor_confirmed_at) {
      const trust = await deviceTrust(pool, user.id, device);
      if (trust !== "trusted") {
        const token = await createChallenge(pool, user.id, device);
        // Its challenge carries the password's proof into /auth/login-2fa: not once the password changed.
        if (!(await passwordStillCurrent(pool, user))) throw wrongCredentials();
        ctx.body = {
          message: "Two-factor authentication is required.",
          two_factor_required: true,
          two_factor_token: token,
          needs_reverification: trust === "expired",
        };
        return;
      }
    }
    ctx.body = await loginResponse(ctx.deps, user, "Login successful.", wrongCredentials);
  },
});

const login2fa = defineRoute({
  method: "post",
  path: "/auth/login-2fa",
  summary: "Complete a two-factor login with a TOTP code or a recovery code",
  tags: ["Authentication"],
  auth: "public",
  body: login2faBody,
  responses: {
    200: {
      description: "Logged in",
      schema: tokenResponse.extend({ recovery_code_used: z.boolean(), recovery_codes_remaining: z.number() }),
    },
    403: { description: "The account was disabled by an administrator after the password step (`account_disabled`)" },
    429: { description: "Too many failed second factors for this account (across addresses and challenges)" },
  },
  handler: async (ctx, { body }) => {
    const { pool, config, identity } = ctx.deps;
    const outcome = await pool.transaction(async (tx) => {
      const challenge = await findOpenChallenge(tx, body.two_factor_token);
      if (!challenge) return { error: "two_factor_token" as const };
      const user = await findLoginUser(tx, { id: challenge.user_id });
      if (!user?.two_factor_secret || !user.two_factor_confirmed_at) return { error: "two_factor_token" as const };
      // Disabled after the password step: refused as /auth/login refuses it (the challenge proves the password).
      if (user.disabled_at) return { error: "disabled" as const };
      // ...the password of then: a challenge from before a password change signs nobody in.
      if (user.password_changed_at && user.password_changed_at >= challenge.created_at) return { error: "two_factor_token" as const };
      const checked = await checkSecondFactor({ attempts: identity.attempts, appKey: config.appKey }, tx, user, body.code);
      if ("locked" in checked) return { error: "locked" as const, retryAfterS: checked.retryAfterS };
      const recoveryUsed = checked.recoveryUsed;
      if (!checked.accepted) {
        await recordWrongCode(tx, challenge);
        return { error: "code" as const };
      }
      await closeChallenge(tx, challenge);
      const deviceId = body.device_id ?? challenge.device_id;
      // The browser the login named carries over, unless this request names another device.
      const browser = body.browser ?? (deviceId === challenge.device_id ? challenge.browser : null);
      if (body.trust_device && deviceId) await trustDevice(tx, user.id, deviceId, browser);
      return { user, recoveryUsed, remaining: await remainingRecoveryCodes(tx, user.id) };
    });
    if ("error" in outcome) {
      if (outcome.error === "locked") throw tooManyAttempts(outcome.retryAfterS, "two-factor");
      if (outcome.error === "disabled") throw new AppError(403, "account_disabled", "This account is disabled; contact the administrators.");
      throw outcome.error === "code" ? invalid({ code: ["The two-factor code is invalid."] }) : expiredChallenge();
    }
    ctx.body = {
      ...(await loginResponse(ctx.deps, outcome.user, "Login successful.", expiredChallenge)),
      recovery_code_used: outcome.recoveryUsed,
      recovery_codes_remaining: outcome.remaining,
    };
  },
});

export const loginRoutes = [register, login, login2fa];
