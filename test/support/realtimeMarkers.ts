/**
 * "No further event" decided by order, not by waiting: after the events under test, a test
 * publishes a marker on a public channel every client also subscribes to, and waits until
 * each client has it. NOTIFYs are delivered in commit order and a socket's frames in send
 * order, so a client that has the marker would have had every event published before it.
 * pusher-js clients and raw sockets record what arrives differently; each gives the wait a
 * check of its own ({@link pusherMarkers}, {@link rawSocketMarkers}).
 */
import type { CommonQueryMethods } from "../../shared/db/pool.ts";
import { publish } from "../../shared/events/publish.ts";
import type { PusherClient, RawSocket } from "./pusher.ts";
import { until } from "./wait.ts";

/** The public channel markers are published on. */
export const markerChannel = "public-marker";
/** The markers' event name. */
export const markerEvent = "Marker";

/** Whether one client has received marker `n`. */
export type MarkerCheck = (n: number) => boolean;

/** Subscribes a pusher-js client to the marker channel and records the markers it receives. */
export async function pusherMarkers(client: PusherClient): Promise<MarkerCheck> {
  const channel = await client.subscribe(markerChannel);
  const seen = new Set<number>();
  channel.bind(markerEvent, (data: { n: number }) => seen.add(data.n));
  return (n) => seen.has(n);
}

/** A raw socket's markers, read from its recorded frames (the socket subscribes to {@link markerChannel} itself). */
export const rawSocketMarkers =
  (socket: RawSocket): MarkerCheck =>
  (n) =>
    socket.frames.some((f) => f.channel === markerChannel && f.event === markerEvent && (f.data as { n: number }).n === n);

let published = 0;

/** Publishes the next marker and waits until every client has it: whatever was published before reached them first. */
export async function passMarker(conn: CommonQueryMethods, clients: MarkerCheck[], timeoutMs?: number): Promise<void> {
  const n = (published += 1);
  await publish(conn, { channel: markerChannel, event: markerEvent, data: { n } });
  await until(() => clients.every((has) => has(n)), { message: `marker ${n} on every socket`, ...(timeoutMs === undefined ? {} : { timeoutMs }) });
}
