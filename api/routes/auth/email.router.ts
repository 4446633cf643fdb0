/**
 * E-mail verification: POST /auth/email/verify/{id}/{hash}?expires=…&signature=… (the
 * signed link; answers with an access token, like a login) and POST /auth/email/resend.
 */
import { z } from "zod";
import { checkVerification, verificationLink } from "../../../shared/auth/emailVerification.ts";
import { findUserById, markEmailVerified } from "../../../shared/db/users.ts";
import { AppError, invalid } from "../../../shared/errors.ts";
import { enqueueMail } from "../../../shared/mail/enqueueMail.ts";
import { acceptInvitations } from "../../../shared/teams/invitations.ts";
import { currentUser } from "../../context.ts";
import { defineRoute } from "../route.ts";
import { messageResponse, tokenResponse, verifyEmailParams, verifyEmailQuery } from "./auth.schema.ts";
import { loginResponse } from "./session.ts";

const verify = defineRoute({
  method: "post",
  path: "/auth/email/verify/{id}/{hash}",
  summary: "Verify an e-mail address with the signed link",
  tags: ["Authentication"],
  auth: "public",
  params: verifyEmailParams,
  query: verifyEmailQuery,
  responses: {
    200: {
      description: "Verified (or already verified); logged in",
      schema: tokenResponse.omit({ has_pending_invitation: true, monthly_credits_awarded: true, token_type: true, expires_in: true }).extend({
        token_type: z.literal("Bearer"),
        expires_in: z.number(),
        invitation_auto_accepted: z.boolean(),
        project_name: z.string().nullable(),
      }),
    },
    403: { description: "The link is invalid" },
  },
  handler: async (ctx, { params, query }) => {
    const { pool, config } = ctx.deps;
    const user = await findUserById(pool, params.id);
    const check = user ? checkVerification(config.appKey, user, params.hash, query.expires, query.signature) : "invalid";
    if (check === "invalid") throw new AppError(403, "invalid_signature", "This verification link is invalid.");
    if (check === "expired") throw invalid({ expires: ["This verification link has expired; ask for a new one."] });
    const invitations = await pool.transaction(async (tx) => {
      await markEmailVerified(tx, user!.id);
      return acceptInvitations(tx, user!);
    });
    const verified = (await findUserById(pool, user!.id))!;
    const { has_pending_invitation: _h, monthly_credits_awarded: _m, ...session } = await loginResponse(ctx.deps, verified, "Your e-mail address has been verified.", false);
    ctx.body = { ...session, invitation_auto_accepted: invitations.accepted, project_name: invitations.projectName };
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

export const emailRoutes = [verify, resend];
