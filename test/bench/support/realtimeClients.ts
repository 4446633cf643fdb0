/**
 * A process of raw WebSocket clients for the realtime benchmark, speaking Pusher protocol
 * v7 directly (pusher-js costs too much per socket for thousands of them). Says `{type: "ready"}`
 * on start, then is driven over IPC:
 * - `{type: "open", url, count, channel, localAddresses?}` opens `count` sockets (over the
 *   given servers and source addresses in turn) and subscribes each to `channel`, or, when
 *   `channel` is null, each to a public channel of its own; answers
 *   `{type: "opened", open, failed}` once all are subscribed or have failed;
 * - `{type: "collect"}` answers `{type: "samples", latencies: {seq: [ms, …]}, closed}`:
 *   for every `bench` event received, publish → receive time at each socket, taken from
 *   the event's `sent` wall-clock stamp (same machine, same clock).
 */
import { WebSocket } from "ws";

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
const sockets: WebSocket[] = [];
let closed = 0;
let ownChannel = 0;

function onFrame(ws: WebSocket, text: string): void {
  const at = wallClock();
  const frame = JSON.parse(text) as { event: string; channel?: string; data?: string };
  if (frame.event === "bench") {
    const data = JSON.parse(frame.data ?? "{}") as { seq: number; sent: number };
    let list = latencies.get(data.seq);
    if (!list) latencies.set(data.seq, (list = []));
    list.push(at - data.sent);
  } else if (frame.event === "pusher:ping") {
    ws.send(JSON.stringify({ event: "pusher:pong", data: {} }));
  }
}

/** Opens one socket and subscribes it; resolves once the subscription succeeded. */
function openOne(url: string, channel: string, localAddress: string | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false, ...(localAddress ? { localAddress } : {}) });
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error("no subscription within 60 s"));
    }, 60_000);
    const setup = (raw: Buffer) => {
      const frame = JSON.parse(raw.toString("utf8")) as { event: string };
      if (frame.event === "pusher:connection_established") {
        ws.send(JSON.stringify({ event: "pusher:subscribe", data: { channel } }));
      } else if (frame.event === "pusher_internal:subscription_succeeded") {
        clearTimeout(timer);
        ws.off("message", setup);
        ws.on("message", (data: Buffer) => onFrame(ws, data.toString("utf8")));
        ws.once("close", () => (closed += 1));
        sockets.push(ws);
        resolve();
      } else if (frame.event === "pusher:subscription_error" || frame.event === "pusher:error") {
        clearTimeout(timer);
        ws.terminate();
        reject(new Error(`subscription refused: ${raw.toString("utf8")}`));
      }
    };
    ws.on("message", setup);
    ws.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
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
