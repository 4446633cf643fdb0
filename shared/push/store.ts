/**
 * SQL of push subscriptions. The keys are sealed on the way in and opened only by the sender.
 */
import { z } from "zod";
import { open, seal } from "../crypto.ts";
import { ignoredRow, sql, type CommonQueryMethods } from "../db/pool.ts";

/** A browser's PushSubscription keys (base64url). */
export interface PushKeys {
  p256dh: string;
  auth: string;
}

const subscriptionRow = z.object({ id: z.number(), user_id: z.number(), endpoint: z.string(), keys_sealed: z.instanceof(Buffer) });

/** A subscription ready to send to. */
export interface PushTarget {
  id: number;
  userId: number;
  endpoint: string;
  keys: PushKeys;
}

/** Saves a subscription for `userId`; the same endpoint subscribed by another account moves to this one. */
export async function upsertSubscription(conn: CommonQueryMethods, appKey: Buffer, userId: number, endpoint: string, keys: PushKeys, expiresAt: Date | null): Promise<number> {
  const sealed = seal(appKey, JSON.stringify(keys));
  return conn.oneFirst(sql.type(z.object({ id: z.number() }))`
    insert into push_subscriptions (user_id, endpoint, keys_sealed, expires_at)
    values (${userId}, ${endpoint}, ${sql.binary(sealed)}, ${expiresAt ? expiresAt.toISOString() : null})
    on conflict (endpoint) do update set user_id = excluded.user_id, keys_sealed = excluded.keys_sealed, expires_at = excluded.expires_at
    returning id`);
}

/** Removes the caller's subscription of `endpoint`; whether one was removed. */
export async function deleteSubscription(conn: CommonQueryMethods, userId: number, endpoint: string): Promise<boolean> {
  const rows = await conn.any(sql.type(z.object({ id: z.number() }))`
    delete from push_subscriptions where user_id = ${userId} and endpoint = ${endpoint} returning id`);
  return rows.length > 0;
}

/** Removes a subscription the push service says is gone (404/410). */
export async function deleteSubscriptionById(conn: CommonQueryMethods, id: number): Promise<void> {
  await conn.query(sql.type(ignoredRow)`delete from push_subscriptions where id = ${id}`);
}

export async function markDelivered(conn: CommonQueryMethods, id: number): Promise<void> {
  await conn.query(sql.type(ignoredRow)`update push_subscriptions set last_success_at = now() where id = ${id}`);
}

/** The live subscriptions of `userId` (optionally only `ids`), keys opened. */
export async function listTargets(conn: CommonQueryMethods, appKey: Buffer, userId: number, ids?: number[]): Promise<PushTarget[]> {
  const only = ids ? sql.fragment`and id = any(${sql.array(ids, "int8")})` : sql.fragment``;
  const rows = await conn.any(sql.type(subscriptionRow)`
    select id, user_id, endpoint, keys_sealed from push_subscriptions
    where user_id = ${userId} and (expires_at is null or expires_at > now()) ${only} order by id`);
  return rows.map((row) => ({ id: row.id, userId: row.user_id, endpoint: row.endpoint, keys: JSON.parse(open(appKey, row.keys_sealed).toString("utf8")) as PushKeys }));
}
