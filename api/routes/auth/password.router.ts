/**
 * Forgotten passwords: POST /auth/forgot-password e-mails a single-use link (same answer
 * whether or not the address has an account) and POST /auth/reset-password sets the new
 * password, signs every session out and confirms by e-mail.
 */
import { findLoginUser } from "../../../shared/auth/credentials.ts";
import { consumeResetToken, createResetToken } from "../../../shared/auth/passwordResets.ts";
import { hashPassword } from "../../../shared/auth/passwords.ts";
import { revokeOAuthGrantsOfAccount } from "../../../shared/db/oauth.ts";
import { setPassword } from "../../../shared/db/users.ts";
import { invalid } from "../../../shared/errors.ts";
import { enqueueMail } from "../../../shared/mail/enqueueMail.ts";
import { defineRoute } from "../route.ts";
import { forgotPasswordBody, messageResponse, resetPasswordBody } from "./auth.schema.ts";

const FORGOT_MESSAGE = "If an account with that e-mail address exists, we have e-mailed a password reset link.";

const forgot = defineRoute({
  method: "post",
  path: "/auth/forgot-password",
  summary: "E-mail a password reset link",
  tags: ["Authentication"],
  auth: "public",
  body: forgotPasswordBody,
  responses: { 200: { description: "Always the same answer", schema: messageResponse } },
  handler: async (ctx, { body }) => {
    const { pool, config } = ctx.deps;
    const user = await findLoginUser(pool, { email: body.email });
    if (user) {
      await pool.transaction(async (tx) => {
        const token = await createResetToken(tx, user.id);
        const link = `${config.frontendUrl}/reset-password?token=${encodeURIComponent(token)}&email=${encodeURIComponent(user.email)}`;
        await enqueueMail(tx, { to: user.email, kind: "reset_password", locale: user.language, params: { name: user.name }, link, userId: user.id });
      });
    }
    ctx.body = { message: FORGOT_MESSAGE };
  },
});

const reset = defineRoute({
  method: "post",
  path: "/auth/reset-password",
  summary: "Set a new password with the e-mailed token",
  tags: ["Authentication"],
  auth: "public",
  body: resetPasswordBody,
  responses: { 200: { description: "Password changed", schema: messageResponse } },
  handler: async (ctx, { body }) => {
    const { pool } = ctx.deps;
    const user = await findLoginUser(pool, { email: body.email });
    const passwordHash = await hashPassword(body.password);
    const done = user
      ? await pool.transaction(async (tx) => {
          if (!(await consumeResetToken(tx, user.id, body.token))) return false;
          await setPassword(tx, user.id, passwordHash);
          await revokeOAuthGrantsOfAccount(tx, user.id);
          await enqueueMail(tx, { to: user.email, kind: "password_changed", locale: user.language, params: { name: user.name }, userId: user.id });
          return true;
        })
      : false;
    if (!done) throw invalid({ email: ["This password reset token is invalid or has expired."] });
    ctx.body = { message: "Your password has been reset." };
  },
});

export const passwordRoutes = [forgot, reset];
