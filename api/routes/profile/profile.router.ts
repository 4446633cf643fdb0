/**
 * The caller's own account: GET|PUT|DELETE /user and the /profile routes (details,
 * password, language, theme, closing the account).
 */
import { z } from "zod";
import { keepOneSuperAdmin } from "../../../shared/admin/userAdministration.ts";
import { pendingEmailOf, requestEmailChange } from "../../../shared/auth/emailChanges.ts";
import { verificationLink } from "../../../shared/auth/emailVerification.ts";
import { hashPassword } from "../../../shared/auth/passwords.ts";
import { reauthenticate } from "../../../shared/auth/reauthenticate.ts";
import { revokeOAuthGrantsOfAccount } from "../../../shared/db/oauth.ts";
import { deleteUser, emailTaken, setPassword, updateProfile, usernameTaken, type ProfileChanges } from "../../../shared/db/users.ts";
import { invalid } from "../../../shared/errors.ts";
import { enqueueMail } from "../../../shared/mail/enqueueMail.ts";
import { currentUser, type AppContext } from "../../context.ts";
import { presentUser, userResource } from "../../presenters/user.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import { messageResponse } from "../auth/auth.schema.ts";
import { LOGIN_TOKEN_TTL_S } from "../auth/session.ts";
import { deleteAccountBody, languageBody, passwordChangeBody, profileBody, themeBody, themes } from "./profile.schema.ts";

/** `pending_email`: the address an e-mail change waits to have confirmed (the account keeps `user.email` until then). */
const userEnvelope = z.object({ message: z.string(), user: userResource, pending_email: z.string().nullable() });

type ProfileInput = ProfileChanges & { current_password?: string | undefined; two_factor_code?: string | undefined };

/**
 * Applies profile changes. A new e-mail address needs the current password (and second
 * factor) and only becomes pending: it is mailed a confirmation link, and the old address a
 * notice with a cancel link (shared/auth/emailChanges.ts).
 */
async function applyProfile(ctx: AppContext, input: ProfileInput) {
  const { current_password: password, two_factor_code: code, ...changes } = input;
  const me = currentUser(ctx);
  const { pool, config, identity } = ctx.deps;
  const errors: Record<string, string[]> = {};
  if (changes.email && (await emailTaken(pool, changes.email, me.id))) errors.email = ["The email has already been taken."];
  if (changes.username && (await usernameTaken(pool, changes.username, me.id))) errors.username = ["The username has already been taken."];
  if (Object.keys(errors).length) throw invalid(errors);
  const { email: newEmail, ...others } = changes;
  const emailChanged = newEmail !== undefined && newEmail.toLowerCase() !== me.email.toLowerCase();
  if (emailChanged) {
    await reauthenticate({ pool, attempts: identity.attempts, appKey: config.appKey }, me, ctx.ip, {
      password,
      passwordField: "current_password",
      code,
      codeField: "two_factor_code",
    });
  }
  const user = await pool.transaction(async (tx) => {
    // A change of letter case only is no change of address.
    const updated = await updateProfile(tx, me.id, emailChanged || newEmail === undefined ? others : changes);
    if (emailChanged) {
      const cancelToken = await requestEmailChange(tx, me, newEmail);
      await enqueueMail(tx, {
        to: newEmail,
        kind: "confirm_new_email",
        locale: updated.language,
        params: { name: updated.name },
        link: verificationLink(config.frontendUrl, config.appKey, { id: me.id, email: newEmail }),
        userId: updated.id,
      });
      await enqueueMail(tx, {
        to: me.email,
        kind: "email_change_requested",
        locale: updated.language,
        params: { name: updated.name, new_email: newEmail },
        link: `${config.frontendUrl}/cancel-email-change?token=${encodeURIComponent(cancelToken)}`,
        userId: updated.id,
      });
    }
    return updated;
  });
  ctx.body = {
    message: emailChanged ? "Profile updated. Confirm your new e-mail address with the link we sent to it; until then your account keeps its current address." : "Profile updated.",
    user: presentUser(user),
    pending_email: await pendingEmailOf(pool, me.id),
  };
}

const closeResponses = {
  200: { description: "Deleted", schema: messageResponse },
  409: {
    description:
      "The account is the last super administrator's (`last_super_admin`), or records kept for others refer to it (`account_has_records`: its invoices)",
  },
};

/** Closes the caller's account after the password (and second factor, when on) re-check. */
async function closeAccount(ctx: AppContext, input: { password: string; two_factor_code?: string | undefined }) {
  const { pool, identity, config } = ctx.deps;
  const user = await reauthenticate({ pool, attempts: identity.attempts, appKey: config.appKey }, currentUser(ctx), ctx.ip, {
    password: input.password,
    passwordField: "password",
    code: input.two_factor_code,
    codeField: "two_factor_code",
  });
  await pool.transaction(async (tx) => {
    // The roles as stored (the token may have set administrator roles aside): the last super administrator stays.
    if (user.roles.includes("super_admin")) await keepOneSuperAdmin(tx, user.id);
    await deleteUser(tx, user.id);
  });
  ctx.body = { message: "Your account has been deleted." };
}

const showUser = defineRoute({
  method: "get",
  path: "/user",
  summary: "The authenticated user",
  tags: ["Account"],
  auth: "bearer",
  responses: { 200: { description: "The User resource", schema: userResource } },
  handler: (ctx) => {
    ctx.body = presentUser(currentUser(ctx));
  },
});

const updateUser = defineRoute({
  method: "put",
  path: "/user",
  summary: "Update the account's details",
  tags: ["Account"],
  auth: "bearer",
  body: profileBody,
  responses: { 200: { description: "Updated", schema: userEnvelope } },
  handler: (ctx, { body }) => applyProfile(ctx, body),
});

const updateProfileRoute = defineRoute({
  method: "put",
  path: "/profile",
  summary: "Update name, e-mail, language and kanban initials and color",
  tags: ["Account"],
  auth: "bearer",
  body: profileBody.omit({ username: true, theme: true }),
  responses: { 200: { description: "Updated", schema: userEnvelope } },
  handler: (ctx, { body }) => applyProfile(ctx, body),
});

const changePassword = defineRoute({
  method: "put",
  path: "/profile/password",
  summary: "Change the password (current password, and second factor when on); every other session is signed out",
  description: "Tokens issued before the change stop working; the response carries a fresh access token for this client.",
  tags: ["Account"],
  auth: "bearer",
  body: passwordChangeBody,
  responses: {
    200: { description: "Changed", schema: messageResponse.extend({ access_token: z.string(), token_type: z.literal("Bearer"), expires_in: z.number() }) },
  },
  handler: async (ctx, { body }) => {
    const { pool, identity, config } = ctx.deps;
    const user = await reauthenticate({ pool, attempts: identity.attempts, appKey: config.appKey }, currentUser(ctx), ctx.ip, {
      password: body.current_password,
      passwordField: "current_password",
      code: body.two_factor_code,
      codeField: "two_factor_code",
    });
    const passwordHash = await hashPassword(body.password);
    await pool.transaction(async (tx) => {
      await setPassword(tx, user.id, passwordHash);
      await revokeOAuthGrantsOfAccount(tx, user.id);
      await enqueueMail(tx, { to: user.email, kind: "password_changed", locale: user.language, params: { name: user.name }, userId: user.id });
    });
    // The fresh token may do what the presented one could, never more.
    const minted = await identity.mintUserToken(user, LOGIN_TOKEN_TTL_S, ctx.state.auth!.scopes);
    ctx.body = { message: "Password changed. Other sessions have been signed out.", access_token: minted.token, token_type: "Bearer", expires_in: minted.expiresIn };
  },
});

const changeLanguage = defineRoute({
  method: "put",
  path: "/profile/language",
  summary: "Set the account's language (en, de)",
  tags: ["Account"],
  auth: "bearer",
  body: languageBody,
  responses: { 200: { description: "Set", schema: z.object({ message: z.string(), language: z.string() }) } },
  handler: async (ctx, { body }) => {
    await updateProfile(ctx.deps.pool, currentUser(ctx).id, { language: body.language });
    ctx.body = { message: "Language updated.", language: body.language };
  },
});

const changeTheme = defineRoute({
  method: "put",
  path: "/profile/theme",
  summary: `Set the account's theme (${themes.join(", ")})`,
  tags: ["Account"],
  auth: "bearer",
  body: themeBody,
  responses: { 200: { description: "Set", schema: z.object({ message: z.string(), theme: z.string() }) } },
  handler: async (ctx, { body }) => {
    await updateProfile(ctx.deps.pool, currentUser(ctx).id, { theme: body.theme });
    ctx.body = { message: "Theme updated.", theme: body.theme };
  },
});

const deleteProfile = defineRoute({
  method: "delete",
  path: "/profile",
  summary: "Close the account (password, and second factor when on, required)",
  tags: ["Account"],
  auth: "bearer",
  body: deleteAccountBody,
  responses: closeResponses,
  handler: (ctx, { body }) => closeAccount(ctx, body),
});

const deleteUserRoute = defineRoute({
  method: "delete",
  path: "/user",
  summary: "Close the account (password, and second factor when on, required)",
  tags: ["Account"],
  auth: "bearer",
  body: deleteAccountBody,
  responses: closeResponses,
  handler: (ctx, { body }) => closeAccount(ctx, body),
});

export const profileRoutes: RouteSpec[] = [showUser, updateUser, deleteUserRoute, updateProfileRoute, changePassword, changeLanguage, changeTheme, deleteProfile];
