/**
 * A process of raw WebSocket clients for the realtime benchmark, speaking Pusher protocol
 * v7 directly (pusher-js costs too much per socket for thousands of them) over a minimal
 * WebSocket client (rawWebSocket.ts): these processes share the cores with the server they
 * measure, so every microsecond they spend per frame shows in the latencies. Says `{type: "ready"}`
 * on start, then is driven over IPC:
 * - `{type: "open", url, count, channel, localAddresses?}` opens `count` sockets (over the
 *   given servers and source addresses in turn) and subscribes each to `channel`, or, when
 *   `channel` is null, each to a public channel of its own; answers
 *   `{type: "opened", open, failed}` once all are subscribed or have failed;
 * - `{type: "collect"}` answers `{type: "samples", latencies: {seq: [ms, …]}, closed}`:
 *   for every `bench` event received, publish → receive time at each socket, taken from
 *   the event's `sent` wall-clock stamp (same machine, same clock).
 */
import { RawWebSocket } from "./rawWebSocket.ts";

export type ClientCommand =
  | {
      type: "open";
      /** One server, or several: sockets go to them in turn. */
      url: string | string[];
      count: number;
      channel: string | null;
      /** Loopback source addresses to connect from, in turn (more sockets than one address has ephemeral ports). */
      localAddresses?: string[];
    }
  | { type: "collect" };
export type ClientReply =
  | { type: "ready" }
  | { type: "opened"; open: number; failed: number; error: string | null }
  | { type: "samples"; latencies: Record<string, number[]>; closed: number };

/** Wall-clock milliseconds with sub-millisecond resolution, comparable across processes. */
export const wallClock = () => performance.timeOrigin + performance.now();

const OPEN_IN_FLIGHT = 100;
const latencies = new Map<number, number[]>();
const sockets: RawWebSocket[] = [];
let closed = 0;
let ownChannel = 0;

/** `seq` and `sent` of a bench event's data, read from the frame's text without parsing it twice. */
const benchStamp = /\\"seq\\":(-?\d+),\\"sent\\":([\d.]+)/;

function onFrame(ws: RawWebSocket, text: string): void {
  const at = wallClock();
  if (text.includes('"event":"bench"')) {
    const stamp = benchStamp.exec(text);
    const data = stamp
      ? { seq: Number(stamp[1]), sent: Number(stamp[2]) }
      : (JSON.parse((JSON.parse(text) as { data: string }).data) as { seq: number; sent: number });
    let list = latencies.get(data.seq);
    if (!list) latencies.set(data.seq, (list = []));
    list.push(at - data.sent);
  } else if (text.includes('"event":"pusher:ping"')) {
    ws.send(JSON.stringify({ event: "pusher:pong", data: {} }));
  }
}

/** Opens one socket and subscribes it; resolves once the subscription succeeded. */
function openOne(url: string, channel: string, localAddress: string | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    let subscribed = false;
    let ws: RawWebSocket | null = null;
    const timer = setTimeout(() => {
      ws?.terminate();
      reject(new Error("no subscription within 60 s"));
    }, 60_000);
    const setup = (text: string, socket: RawWebSocket) => {
      ws = socket;
      const frame = JSON.parse(text) as { event: string };
      if (frame.event === "pusher:connection_established") {
        ws.send(JSON.stringify({ event: "pusher:subscribe", data: { channel } }));
      } else if (frame.event === "pusher_internal:subscription_succeeded") {
        clearTimeout(timer);
        subscribed = true;
        sockets.push(ws);
        resolve();
      } else if (frame.event === "pusher:subscription_error" || frame.event === "pusher:error") {
        clearTimeout(timer);
        ws.terminate();
        reject(new Error(`subscription refused: ${text}`));
      }
    };
    RawWebSocket.connect(url, {
      ...(localAddress ? { localAddress } : {}),
      onText: (text, socket) => (subscribed ? onFrame(socket, text) : setup(text, socket)),
      onClose: () => {
        if (subscribed) closed += 1;
        else {
          clearTimeout(timer);
          reject(new Error("connection closed before the subscription succeeded"));
        }
      },
    }).then(
      (opened) => (ws = opened),
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

async function open(url: string | string[], count: number, channel: string | null, localAddresses: string[] = []): Promise<ClientReply> {
  const urls = Array.isArray(url) ? url : [url];
  let next = 0;
  let failed = 0;
  let error: string | null = null;
  const lane = async () => {
    while (next < count) {
      const n = next;
      next += 1;
      try {
        await openOne(urls[n % urls.length]!, channel ?? `bench-idle-${process.pid}-${(ownChannel += 1)}`, localAddresses[n % localAddresses.length]);
      } catch (e) {
        failed += 1;
        error ??= e instanceof Error ? e.message : String(e);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(OPEN_IN_FLIGHT, count) }, lane));
  return { type: "opened", open: sockets.length, failed, error };
}

process.on("message", (command: ClientCommand) => {
  if (command.type === "open") {
    void open(command.url, command.count, command.channel, command.localAddresses).then((reply) => process.send?.(reply));
  } else {
    process.send?.({ type: "samples", latencies: Object.fromEntries(latencies), closed } satisfies ClientReply);
  }
});
process.on("SIGTERM", () => process.exit(0));
process.send?.({ type: "ready" } satisfies ClientReply);
