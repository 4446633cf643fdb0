/**
 * E-mail verification: POST /auth/email/verify/{id}/{hash}?expires=…&signature=… (the
 * signed link), POST /auth/email/resend, and POST /auth/email/cancel-change (the link sent
 * to the old address when the address is changed).
 *
 * A link works once (a second use answers 410 `link_used`); a disabled account's link is
 * refused (403 `account_disabled`, as login refuses it) and left unused. It signs in only when it
 * verifies a new account's address for the first time, with a read+write token (never the
 * `admin` scope), and for an account with two-factor authentication only through the
 * second factor (`two_factor_required`, as login). A link that confirms an e-mail *change*
 * confirms and does not sign in (`access_token` null), so a change made with a stolen
 * session gives no way into the account.
 */
import { z } from "zod";
import { cancelEmailChange, confirmEmailChange, findPendingChange } from "../../../shared/auth/emailChanges.ts";
import { checkVerification, claimLink, emailHash, verificationLink } from "../../../shared/auth/emailVerification.ts";
import { findLoginUser } from "../../../shared/auth/credentials.ts";
import { createChallenge } from "../../../shared/auth/loginChallenges.ts";
import { findUserById, markEmailVerified } from "../../../shared/db/users.ts";
import { AppError, invalid } from "../../../shared/errors.ts";
import { enqueueMail } from "../../../shared/mail/enqueueMail.ts";
import { acceptInvitations } from "../../../shared/teams/invitations.ts";
import { currentUser } from "../../context.ts";
import { presentUser, userResource } from "../../presenters/user.ts";
import { defineRoute } from "../route.ts";
import { messageResponse, twoFactorRequiredResponse, verifyEmailParams, verifyEmailQuery } from "./auth.schema.ts";
import { LOGIN_TOKEN_TTL_S } from "./session.ts";

const invitationFields = { invitation_auto_accepted: z.boolean(), project_name: z.string().nullable() };

const verifiedResponse = z.object({
  message: z.string(),
  user: userResource,
  /** Null when the link confirmed an e-mail change, or the address was verified before: the link confirms, it does not sign in. */
  access_token: z.string().nullable(),
  token_type: z.literal("Bearer"),
  expires_in: z.number().nullable(),
  ...invitationFields,
});

const verify = defineRoute({
  method: "post",
  path: "/auth/email/verify/{id}/{hash}",
  summary: "Verify an e-mail address (or confirm an e-mail change) with the signed link",
  description:
    "Each link works once. The first verification of an account's address signs in (a read+write token; `two_factor_required` with a `two_factor_token` for `/auth/login-2fa` when the account uses two-factor authentication). Confirming a change of address, or a link for an address already verified, answers `access_token` null.",
  tags: ["Authentication"],
  auth: "public",
  params: verifyEmailParams,
  query: verifyEmailQuery,
  responses: {
    200: { description: "Verified or confirmed; signed in only as the description says", schema: z.union([verifiedResponse, twoFactorRequiredResponse.extend({ user: userResource, ...invitationFields })]) },
    403: { description: "The link is invalid (`invalid_signature`), or the account is disabled (`account_disabled`: the link stays unused)" },
    410: { description: "The link was used before (`link_used`)" },
  },
  handler: async (ctx, { params, query }) => {
    const { pool, config } = ctx.deps;
    const user = await findLoginUser(pool, { id: params.id });
    const change = user && params.hash !== emailHash(user.email) ? await findPendingChange(pool, user.id, params.hash) : null;
    const address = change ? change.new_email : user?.email;
    const check = user && address ? checkVerification(config.appKey, { id: user.id, email: address }, params.hash, query.expires, query.signature) : "invalid";
    if (check === "invalid") throw new AppError(403, "invalid_signature", "This verification link is invalid.");
    if (check === "expired") throw invalid({ expires: ["This verification link has expired; ask for a new one."] });
    // As login refuses it, before the link is used up: nothing is verified, confirmed or signed in.
    if (user!.disabled_at) throw new AppError(403, "account_disabled", "This account is disabled; contact the administrators.");
    const outcome = await pool.transaction(async (tx) => {
      if (!(await claimLink(tx, user!.id, query.signature, query.expires))) return "used" as const;
      if (change && !(await confirmEmailChange(tx, change))) return "taken" as const;
      if (!change) await markEmailVerified(tx, user!.id);
      const current = (await findUserById(tx, user!.id))!;
      // A new account joins the teams it registered for; an existing one accepts invitations itself (GET /team-invitations).
      const invitations = change ? { accepted: false, projectName: null } : await acceptInvitations(tx, current);
      return { current, invitations };
    });
    if (outcome === "used") throw new AppError(410, "link_used", "This link has already been used.");
    if (outcome === "taken") throw invalid({ email: ["The email has already been taken."] });
    const { current, invitations } = outcome;
    const invited = { invitation_auto_accepted: invitations.accepted, project_name: invitations.projectName };
    const firstVerification = !change && user!.email_verified_at === null;
    if (!firstVerification) {
      const message = change ? "Your new e-mail address is confirmed. Sign in with it." : "Your e-mail address was already verified.";
      ctx.body = { message, user: presentUser(current), access_token: null, token_type: "Bearer", expires_in: null, ...invited };
      return;
    }
    if (user!.two_factor_confirmed_at) {
      const token = await createChallenge(pool, user!.id, { deviceId: null, browser: null });
      ctx.body = {
        message: "Your e-mail address has been verified. Two-factor authentication is required to sign in.",
        user: presentUser(current),
        two_factor_required: true,
        two_factor_token: token,
        needs_reverification: false,
        ...invited,
      };
      return;
    }
    // Proof of a mailbox is no proof of an administrator: the token never carries `admin`.
    const minted = await ctx.deps.identity.mintUserToken(current, LOGIN_TOKEN_TTL_S, ["read", "write"]);
    ctx.body = {
      message: "Your e-mail address has been verified.",
      user: presentUser(current),
      access_token: minted.token,
      token_type: "Bearer",
      expires_in: minted.expiresIn,
      ...invited,
    };
  },
});

const resend = defineRoute({
  method: "post",
  path: "/auth/email/resend",
  summary: "Send the verification e-mail again",
  tags: ["Authentication"],
  auth: "bearer",
  responses: { 200: { description: "Sent (or nothing to do)", schema: messageResponse } },
  handler: async (ctx) => {
    const user = currentUser(ctx);
    if (user.email_verified_at) {
      ctx.body = { message: "Your e-mail address is already verified." };
      return;
    }
    const { config, pool } = ctx.deps;
    await enqueueMail(pool, {
      to: user.email,
      kind: "verify_email",
      locale: user.language,
      params: { name: user.name },
      link: verificationLink(config.frontendUrl, config.appKey, user),
      userId: user.id,
    });
    ctx.body = { message: "A new verification link has been sent to your e-mail address." };
  },
});

const cancelChange = defineRoute({
  method: "post",
  path: "/auth/email/cancel-change",
  summary: "Cancel an e-mail change with the link sent to the old address; every session ends",
  description: `The token comes from the notice sent to the old address (valid 7 days, once). A pending change is dropped; a confirmed one is undone (the old address returns). Every token of the account stops working either way.`,
  tags: ["Authentication"],
  auth: "public",
  body: z.object({ token: z.string().min(10).max(255) }),
  responses: { 200: { description: "Cancelled; signed out everywhere", schema: messageResponse } },
  handler: async (ctx, { body }) => {
    const userId = await ctx.deps.pool.transaction((tx) => cancelEmailChange(tx, body.token));
    if (userId === null) throw invalid({ token: ["This link is invalid, was used already or has expired."] });
    ctx.body = { message: "The e-mail change was cancelled and every session was signed out. Change your password now." };
  },
});

export const emailRoutes = [verify, resend, cancelChange];
