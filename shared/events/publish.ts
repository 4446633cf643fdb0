/**
 * Publishing realtime events. An event is a NOTIFY on the `realtime` channel, sent on the
 * caller's connection, so inside a transaction it is delivered only if that commits.
 * NOTIFY payloads are capped at 8000 bytes; larger events are stored in
 * `realtime_payloads` and the notification carries their id (DESIGN §5).
 */
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods } from "../db/pool.ts";

/** The Postgres NOTIFY channel every realtime event travels on. */
export const REALTIME_CHANNEL = "realtime";

/** Payloads larger than this many bytes travel by reference. */
export const INLINE_LIMIT_BYTES = 7000;

export interface RealtimeEvent {
  /** Pusher channel name, e.g. `private-deployment.12`. */
  channel: string;
  /** Event name as the spec gives it, e.g. `LogAdded`. */
  event: string;
  data: unknown;
}

/**
 * The NOTIFY payload of `event` when it fits inline; undefined when it must travel by
 * reference (then use `publish`). Lets a caller fold the NOTIFY into a statement of its own.
 */
export function inlinePayload(event: RealtimeEvent): string | undefined {
  const text = JSON.stringify({ channel: event.channel, event: event.event, data: event.data });
  return Buffer.byteLength(text) > INLINE_LIMIT_BYTES ? undefined : text;
}

/** Publishes `event` on `conn` (a pool, connection or transaction). */
export async function publish(conn: CommonQueryMethods, event: RealtimeEvent): Promise<void> {
  const body = { channel: event.channel, event: event.event, data: event.data };
  let text = inlinePayload(event) ?? "";
  if (!text) {
    const id = await conn.oneFirst(
      sql.type(z.object({ id: z.number() }))`insert into realtime_payloads (body) values (${sql.jsonb(body as never)}) returning id`,
    );
    text = JSON.stringify({ ref: id });
  }
  await conn.query(sql.type(ignoredRow)`select pg_notify(${REALTIME_CHANNEL}, ${text})`);
}

const inlineEvent = z.object({ channel: z.string(), event: z.string(), data: z.unknown() });
const reference = z.object({ ref: z.number().int() });

/** Decodes a NOTIFY payload into an event, loading it from `realtime_payloads` when sent by reference. */
export async function decodeEvent(conn: CommonQueryMethods, payload: string): Promise<RealtimeEvent | undefined> {
  const json: unknown = JSON.parse(payload);
  const ref = reference.safeParse(json);
  if (ref.success) {
    const row = await conn.maybeOne(
      sql.type(z.object({ body: inlineEvent }))`select body from realtime_payloads where id = ${ref.data.ref}`,
    );
    return row?.body;
  }
  const inline = inlineEvent.safeParse(json);
  return inline.success ? (inline.data) : undefined;
}
