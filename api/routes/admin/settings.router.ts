/**
 * GET|PUT /admin/settings: the global settings (registration, maintenance mode, default
 * language, upload limit under the configured ceiling, payout minimum). A change NOTIFYs
 * every process through the table's trigger, so their caches re-read it at once.
 * POST /admin/cache/clear: tells every process to drop its cached settings.
 * Both are audited.
 */
import { z } from "zod";
import { insertAuditEntry } from "../../../shared/admin/auditLog.ts";
import { ignoredRow, sql } from "../../../shared/db/pool.ts";
import { invalidField } from "../../../shared/errors.ts";
import type { Config } from "../../../shared/config.ts";
import { CACHE_CLEAR_CHANNEL } from "../../../shared/settings/cache.ts";
import { lockGlobalSettings, updateGlobalSettings, type GlobalSettingsChanges, type GlobalSettingsRow } from "../../../shared/settings/store.ts";
import { currentUser } from "../../context.ts";
import { authorize } from "../../policies/authorize.ts";
import { isSiteAdmin } from "../../policies/roles.ts";
import { defineRoute } from "../route.ts";
import { globalSettingsResource, updateGlobalSettingsBody } from "../settings/settings.schema.ts";

function presentGlobalSettings(row: GlobalSettingsRow, config: Config): z.infer<typeof globalSettingsResource> {
  return {
    registration_open: row.registration_open,
    maintenance: { enabled: row.maintenance_enabled, message: row.maintenance_message, retry_after_seconds: row.maintenance_retry_after_s },
    default_language: row.default_language,
    upload_limit_bytes: Math.min(row.upload_limit_bytes ?? config.uploadLimitBytes, config.uploadLimitBytes),
    upload_limit_ceiling_bytes: config.uploadLimitBytes,
    payout_minimum_eur: row.payout_minimum_cents === null ? null : row.payout_minimum_cents / 100,
    updated_at: row.updated_at.toISOString(),
  };
}

const settingsBody = z.object({ settings: globalSettingsResource });

const showGlobalSettings = defineRoute({
  method: "get",
  path: "/admin/settings",
  summary: "The global settings (site administrators only)",
  tags: ["Admin"],
  auth: "bearer",
  responses: { 200: { description: "Global settings", schema: settingsBody }, 403: { description: "Not an administrator" } },
  handler: async (ctx) => {
    authorize(isSiteAdmin(currentUser(ctx)), "Only administrators may read the global settings.");
    ctx.body = { settings: presentGlobalSettings(await ctx.deps.settings.get(), ctx.deps.config) };
  },
});

const updateGlobal = defineRoute({
  method: "put",
  path: "/admin/settings",
  summary: "Change the global settings (audited; every process sees the change at once)",
  tags: ["Admin"],
  auth: "bearer",
  body: updateGlobalSettingsBody,
  responses: { 200: { description: "Saved", schema: settingsBody.extend({ message: z.string() }) }, 403: { description: "Not an administrator" } },
  handler: async (ctx, { body }) => {
    const actor = currentUser(ctx);
    authorize(isSiteAdmin(actor), "Only administrators may change the global settings.");
    const { config } = ctx.deps;
    if (body.upload_limit_bytes != null && body.upload_limit_bytes > config.uploadLimitBytes) {
      throw invalidField("upload_limit_bytes", `The upload limit may not exceed the configured ceiling of ${config.uploadLimitBytes} bytes.`);
    }
    const changes: GlobalSettingsChanges = {
      registration_open: body.registration_open,
      maintenance_enabled: body.maintenance?.enabled,
      maintenance_message: body.maintenance?.message,
      maintenance_retry_after_s: body.maintenance?.retry_after_seconds,
      default_language: body.default_language,
      upload_limit_bytes: body.upload_limit_bytes,
      payout_minimum_cents: body.payout_minimum_eur === undefined ? undefined : body.payout_minimum_eur === null ? null : Math.round(body.payout_minimum_eur * 100),
    };
    const row = await ctx.deps.pool.transaction(async (tx) => {
      const before = await lockGlobalSettings(tx);
      const after = await updateGlobalSettings(tx, changes, actor.id);
      const [was, is] = [presentGlobalSettings(before, config), presentGlobalSettings(after, config)];
      const changed = (Object.keys(is) as (keyof typeof is)[]).filter((k) => k !== "updated_at" && JSON.stringify(was[k]) !== JSON.stringify(is[k]));
      if (changed.length) {
        const pick = (o: typeof is) => Object.fromEntries(changed.map((k) => [k, o[k]]));
        await insertAuditEntry(tx, { actorId: actor.id, action: "settings.updated", subjectType: "global_settings", subjectId: null, before: pick(was), after: pick(is) });
      }
      return after;
    });
    // This process need not wait for its own NOTIFY.
    ctx.deps.settings.invalidate();
    ctx.body = { message: "Settings saved.", settings: presentGlobalSettings(row, config) };
  },
});

const clearCache = defineRoute({
  method: "post",
  path: "/admin/cache/clear",
  summary: "Clear the cached settings in every process (audited)",
  tags: ["Admin"],
  auth: "bearer",
  responses: { 200: { description: "Cleared", schema: z.object({ message: z.string(), cleared: z.array(z.string()) }) }, 403: { description: "Not an administrator" } },
  handler: async (ctx) => {
    const actor = currentUser(ctx);
    authorize(isSiteAdmin(actor), "Only administrators may clear caches.");
    await ctx.deps.pool.transaction(async (tx) => {
      await insertAuditEntry(tx, { actorId: actor.id, action: "cache.cleared", subjectType: "cache", subjectId: null, before: null, after: { caches: ["settings"] } });
      await tx.query(sql.type(ignoredRow)`select pg_notify(${CACHE_CLEAR_CHANNEL}, '')`);
    });
    ctx.deps.settings.invalidate();
    ctx.body = { message: "Caches cleared in every process.", cleared: ["settings"] };
  },
});

export const adminSettingsRoutes = [showGlobalSettings, updateGlobal, clearCache];
