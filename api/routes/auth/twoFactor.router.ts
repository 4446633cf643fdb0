/**
 * Two-factor enrollment (DESIGN §6): /auth/2fa/enable {current_password} (a pending secret and
 * its otpauth URI), /auth/2fa/confirm {code, current_password} (turns it on; ten recovery
 * codes, shown once), /auth/2fa/disable {password} and /auth/2fa/recovery-codes {password}
 * (new codes). Enrolling asks for the password too: with a stolen token alone, switching 2FA
 * on to the thief's authenticator would lock the owner out of their account. Turning it off
 * and new codes mail the account a link that undoes them (/auth/2fa/restore {token},
 * shared/auth/twoFactorRestores.ts), since DESIGN §6 lets them take the password alone.
 */
import { z } from "zod";
import { findLoginUser } from "../../../shared/auth/credentials.ts";
import { reauthenticate } from "../../../shared/auth/reauthenticate.ts";
import { noticeTwoFactorChange, restoreTwoFactor } from "../../../shared/auth/twoFactorRestores.ts";
import { consumeTotpStep, matchTotp, newTotpSecret, otpauthUri, replaceRecoveryCodes } from "../../../shared/auth/twoFactor.ts";
import { openText, seal } from "../../../shared/crypto.ts";
import { ignoredRow, sql } from "../../../shared/db/pool.ts";
import { conflict, invalid } from "../../../shared/errors.ts";
import { currentUser, type AppContext } from "../../context.ts";
import { defineRoute } from "../route.ts";
import { messageResponse } from "./auth.schema.ts";

const passwordBody = z.object({ password: z.string().min(1).max(1024) });
/** The password re-check of enrollment: optional here so a missing one answers 422 on `current_password` with the re-check's message. */
const currentPassword = z.string().max(1024).optional();
const codesResponse = z.object({ message: z.string(), recovery_codes: z.array(z.string()) });

async function loginUser(ctx: AppContext) {
  const user = await findLoginUser(ctx.deps.pool, { id: currentUser(ctx).id });
  if (!user) throw new Error("authenticated user vanished");
  return user;
}

/** The password re-check, counted with login's failed attempts. @throws 422 on `field`, 429 */
async function requirePassword(ctx: AppContext, password: string | undefined, field = "password") {
  const { pool, identity, config } = ctx.deps;
  return reauthenticate({ pool, attempts: identity.attempts, appKey: config.appKey }, currentUser(ctx), ctx.ip, { password, passwordField: field });
}

const enable = defineRoute({
  method: "post",
  path: "/auth/2fa/enable",
  summary: "Start two-factor enrollment: a new secret to add to an authenticator app",
  tags: ["Two-factor"],
  description: "Needs `current_password` (422 `errors.current_password` when missing or wrong; wrong ones count against the failed-password limit, 429).",
  auth: "bearer",
  body: z.object({ current_password: currentPassword }),
  responses: {
    200: { description: "Pending secret", schema: z.object({ message: z.string(), secret: z.string(), otpauth_url: z.string() }) },
    409: { description: "Two-factor authentication is already on" },
  },
  handler: async (ctx, { body }) => {
    await requirePassword(ctx, body.current_password, "current_password");
    const user = await loginUser(ctx);
    if (user.two_factor_confirmed_at) throw conflict("Two-factor authentication is already enabled.", "two_factor_enabled");
    const secret = newTotpSecret();
    await ctx.deps.pool.query(sql.type(ignoredRow)`
      update users set two_factor_pending_secret = ${sql.binary(seal(ctx.deps.config.appKey, secret))} where id = ${user.id}`);
    ctx.body = { message: "Scan the code with your authenticator app, then confirm with a code.", secret, otpauth_url: otpauthUri(secret, user.email) };
  },
});

const confirm = defineRoute({
  method: "post",
  path: "/auth/2fa/confirm",
  summary: "Confirm enrollment with a code from the app; returns ten recovery codes",
  tags: ["Two-factor"],
  description:
    "Needs `current_password` as enable does. Confirms once: a confirmation that finds two-factor already on (another one won, also one sent at the same moment with another valid code) answers 409 `two_factor_enabled`, so the recovery codes of the one answer that got them are the ones that work.",
  auth: "bearer",
  body: z.object({ code: z.string().trim().regex(/^\d{6}$/, { error: "The code must be 6 digits." }), current_password: currentPassword }),
  responses: { 200: { description: "Enabled", schema: codesResponse }, 409: { description: "Two-factor authentication is already on (`two_factor_enabled`)" } },
  handler: async (ctx, { body }) => {
    const { pool, config } = ctx.deps;
    await requirePassword(ctx, body.current_password, "current_password");
    const userId = currentUser(ctx).id;
    const pending = await pool.maybeOneFirst(sql.type(z.object({ s: z.instanceof(Buffer).nullable() }))`
      select two_factor_pending_secret as s from users where id = ${userId}`);
    if (!pending) throw invalid({ code: ["Start with /auth/2fa/enable first."] });
    const step = matchTotp(openText(config.appKey, pending), body.code);
    if (step === null) throw invalid({ code: ["The code is invalid."] });
    const codes = await pool.transaction(async (tx) => {
      // Only the secret the code was checked against, and only while it is still pending: a
      // confirmation racing this one waits for its row lock here and then finds nothing to confirm.
      const confirmed = await tx.maybeOne(sql.type(z.object({ id: z.number() }))`
        update users set two_factor_secret = two_factor_pending_secret, two_factor_pending_secret = null,
          two_factor_confirmed_at = now(), updated_at = now()
        where id = ${userId} and two_factor_confirmed_at is null and two_factor_pending_secret = ${sql.binary(pending)}
        returning id`);
      if (!confirmed) {
        const on = await tx.oneFirst(sql.type(z.object({ on: z.boolean() }))`select two_factor_confirmed_at is not null as on from users where id = ${userId}`);
        if (on) throw conflict("Two-factor authentication is already enabled.", "two_factor_enabled");
        throw invalid({ code: ["The secret was replaced meanwhile: confirm with a code of the new one."] });
      }
      // A code used before (a replayed step) confirms nothing: the error rolls the confirmation back.
      if (!(await consumeTotpStep(tx, userId, step))) throw invalid({ code: ["The code is invalid."] });
      return replaceRecoveryCodes(tx, userId);
    });
    ctx.body = { message: "Two-factor authentication is enabled. Keep these recovery codes somewhere safe.", recovery_codes: codes };
  },
});

const disable = defineRoute({
  method: "post",
  path: "/auth/2fa/disable",
  summary: "Turn two-factor authentication off (password required)",
  description: "The account is mailed a notice whose link (`POST /auth/2fa/restore`, 7 days, once) turns it back on with the same secret and recovery codes and ends every session.",
  tags: ["Two-factor"],
  auth: "bearer",
  body: passwordBody,
  responses: { 200: { description: "Disabled", schema: messageResponse } },
  handler: async (ctx, { body }) => {
    const user = await requirePassword(ctx, body.password);
    await ctx.deps.pool.transaction(async (tx) => {
      await noticeTwoFactorChange(tx, user, "disabled", ctx.deps.config.frontendUrl);
      await tx.query(sql.type(ignoredRow)`
        update users set two_factor_secret = null, two_factor_pending_secret = null, two_factor_confirmed_at = null, updated_at = now()
        where id = ${user.id}`);
      await tx.query(sql.type(ignoredRow)`delete from two_factor_recovery_codes where user_id = ${user.id}`);
      await tx.query(sql.type(ignoredRow)`delete from trusted_devices where user_id = ${user.id}`);
    });
    ctx.body = { message: "Two-factor authentication is disabled." };
  },
});

const recoveryCodes = defineRoute({
  method: "post",
  path: "/auth/2fa/recovery-codes",
  summary: "Replace the recovery codes (password required)",
  description: "The account is mailed a notice whose link (`POST /auth/2fa/restore`, 7 days, once) puts the previous codes back and ends every session.",
  tags: ["Two-factor"],
  auth: "bearer",
  body: passwordBody,
  responses: { 200: { description: "New codes", schema: codesResponse } },
  handler: async (ctx, { body }) => {
    const user = await requirePassword(ctx, body.password);
    if (!user.two_factor_confirmed_at) throw conflict("Two-factor authentication is not enabled.", "two_factor_disabled");
    const codes = await ctx.deps.pool.transaction(async (tx) => {
      await noticeTwoFactorChange(tx, user, "recovery_codes", ctx.deps.config.frontendUrl);
      return replaceRecoveryCodes(tx, user.id);
    });
    ctx.body = { message: "New recovery codes generated; the old ones no longer work.", recovery_codes: codes };
  },
});

const restore = defineRoute({
  method: "post",
  path: "/auth/2fa/restore",
  summary: "Undo turning two-factor off, or new recovery codes, with the link mailed to the account; every session ends",
  description:
    "The token comes from the notice mailed when two-factor was turned off or its recovery codes replaced (valid 7 days, once). Two-factor is back as it was just before that change (the same secret and the recovery codes then unused); every token and trusted device of the account stops working.",
  tags: ["Two-factor"],
  auth: "public",
  body: z.object({ token: z.string().min(10).max(255) }),
  responses: { 200: { description: "Restored; signed out everywhere", schema: messageResponse } },
  handler: async (ctx, { body }) => {
    const userId = await ctx.deps.pool.transaction((tx) => restoreTwoFactor(tx, body.token));
    if (userId === null) throw invalid({ token: ["This link is invalid, was used already or has expired."] });
    ctx.body = { message: "Two-factor authentication is restored and every session was signed out. Change your password now." };
  },
});

export const twoFactorRoutes = [enable, confirm, disable, recoveryCodes, restore];
