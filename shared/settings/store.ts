/**
 * SQL of the settings area: the global settings row and each user's notification choices.
 */
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods } from "../db/pool.ts";
import { defaultChoice, NOTIFICATION_CHANNELS, NOTIFICATION_KINDS, type NotificationChoices } from "./notificationKinds.ts";

export const globalSettingsRow = z.object({
  registration_open: z.boolean(),
  maintenance_enabled: z.boolean(),
  maintenance_message: z.string().nullable(),
  maintenance_retry_after_s: z.number(),
  default_language: z.string(),
  upload_limit_bytes: z.number().nullable(),
  payout_minimum_cents: z.number().nullable(),
  updated_at: z.date(),
});
export type GlobalSettingsRow = z.infer<typeof globalSettingsRow>;

const columns = sql.fragment`registration_open, maintenance_enabled, maintenance_message, maintenance_retry_after_s,
  default_language, upload_limit_bytes, payout_minimum_cents, updated_at`;

/** The global settings (the row exists from the migration on; recreated with defaults if someone deleted it). */
export async function findGlobalSettings(conn: CommonQueryMethods): Promise<GlobalSettingsRow> {
  const row = await conn.maybeOne(sql.type(globalSettingsRow)`select ${columns} from global_settings where id`);
  if (row) return row;
  return conn.one(sql.type(globalSettingsRow)`
    insert into global_settings default values on conflict (id) do update set id = excluded.id returning ${columns}`);
}

/** The writable columns of the global settings. */
export type GlobalSettingsChanges = Partial<Omit<GlobalSettingsRow, "updated_at">>;

/** Applies `changes` (the caller has locked the row) and returns the new row. */
export async function updateGlobalSettings(conn: CommonQueryMethods, changes: GlobalSettingsChanges, actorId: number): Promise<GlobalSettingsRow> {
  await findGlobalSettings(conn);
  const sets = Object.entries(changes)
    .filter(([, value]) => value !== undefined)
    .map(([column, value]) => sql.fragment`${sql.identifier([column])} = ${value}`);
  sets.push(sql.fragment`updated_by = ${actorId}`, sql.fragment`updated_at = now()`);
  return conn.one(sql.type(globalSettingsRow)`update global_settings set ${sql.join(sets, sql.fragment`, `)} where id returning ${columns}`);
}

/** Locks the global settings row for a read-modify-write. */
export async function lockGlobalSettings(conn: CommonQueryMethods): Promise<GlobalSettingsRow> {
  await findGlobalSettings(conn);
  return conn.one(sql.type(globalSettingsRow)`select ${columns} from global_settings where id for update`);
}

/** A user's notification choices with every kind and channel filled in (defaults: NOTIFICATION_DEFAULTS). */
export async function findNotificationChoices(conn: CommonQueryMethods, userId: number): Promise<NotificationChoices> {
  const stored = await conn.maybeOneFirst(sql.type(z.object({ notifications: z.record(z.string(), z.unknown()) }))`
    select notifications from user_settings where user_id = ${userId}`);
  return completeChoices(stored ?? {});
}

/** Fills in every kind and channel; unknown keys in stored JSON are dropped. */
export function completeChoices(stored: Record<string, unknown>): NotificationChoices {
  const out = {} as NotificationChoices;
  for (const kind of NOTIFICATION_KINDS) {
    const given = (stored[kind] ?? {}) as Record<string, unknown>;
    out[kind] = Object.fromEntries(NOTIFICATION_CHANNELS.map((channel) => [channel, typeof given[channel] === "boolean" ? given[channel] : defaultChoice(kind, channel)])) as NotificationChoices[typeof kind];
  }
  return out;
}

/** Merges `changes` into the stored choices. */
export async function saveNotificationChoices(conn: CommonQueryMethods, userId: number, changes: Record<string, Partial<Record<string, boolean>>>): Promise<void> {
  await conn.query(sql.type(ignoredRow)`
    insert into user_settings (user_id, notifications) values (${userId}, ${sql.jsonb(changes as never)})
    on conflict (user_id) do update set
      notifications = (
        select coalesce(jsonb_object_agg(k, coalesce(user_settings.notifications -> k, '{}') || coalesce(excluded.notifications -> k, '{}')), '{}')
        from (select jsonb_object_keys(user_settings.notifications) as k union select jsonb_object_keys(excluded.notifications)) keys
      ),
      updated_at = now()`);
}

/** Whether `userId` wants `kind` notifications on `channel`. */
export async function wantsNotification(conn: CommonQueryMethods, userId: number, kind: string, channel: string): Promise<boolean> {
  const value = await conn.maybeOneFirst(sql.type(z.object({ wanted: z.boolean().nullable() }))`
    select (notifications -> ${kind} ->> ${channel})::boolean as wanted from user_settings where user_id = ${userId}`);
  return value ?? defaultChoice(kind, channel);
}
