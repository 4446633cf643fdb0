/**
 * GET|PUT /settings: the caller's preferences (language, theme, and per notification kind
 * whether to e-mail and push). Language and theme live on the user row (the profile routes
 * write them too); the notification choices in user_settings.
 */
import { z } from "zod";
import { findUserById, updateProfile } from "../../../shared/db/users.ts";
import { findNotificationChoices, saveNotificationChoices } from "../../../shared/settings/store.ts";
import { currentUser } from "../../context.ts";
import { defineRoute } from "../route.ts";
import { updateSettingsBody, userSettingsResource } from "./settings.schema.ts";

const showSettings = defineRoute({
  method: "get",
  path: "/settings",
  summary: "The caller's preferences",
  tags: ["Settings"],
  auth: "bearer",
  responses: { 200: { description: "Preferences", schema: z.object({ settings: userSettingsResource }) } },
  handler: async (ctx) => {
    const user = currentUser(ctx);
    ctx.body = { settings: { language: user.language, theme: user.theme, notifications: await findNotificationChoices(ctx.deps.pool, user.id) } };
  },
});

const updateSettings = defineRoute({
  method: "put",
  path: "/settings",
  summary: "Change the caller's preferences",
  tags: ["Settings"],
  auth: "bearer",
  body: updateSettingsBody,
  responses: { 200: { description: "Saved", schema: z.object({ message: z.string(), settings: userSettingsResource }) } },
  handler: async (ctx, { body }) => {
    const me = currentUser(ctx);
    const { user, notifications } = await ctx.deps.pool.transaction(async (tx) => {
      const changes = { ...(body.language ? { language: body.language } : {}), ...(body.theme ? { theme: body.theme } : {}) };
      const updated = Object.keys(changes).length ? await updateProfile(tx, me.id, changes) : await findUserById(tx, me.id);
      if (body.notifications) await saveNotificationChoices(tx, me.id, body.notifications);
      return { user: updated ?? me, notifications: await findNotificationChoices(tx, me.id) };
    });
    ctx.body = { message: "Settings saved.", settings: { language: user.language, theme: user.theme, notifications } };
  },
});

export const settingsRoutes = [showSettings, updateSettings];
