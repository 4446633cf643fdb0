/**
 * pusher-js as a real client against our realtime server, plus a raw WebSocket helper for
 * protocol-level checks pusher-js would never send.
 */
import PusherModule from "pusher-js";
import type { Channel } from "pusher-js";
import type { Test } from "tap";
import { WebSocket } from "ws";

// pusher-js is CommonJS whose typings declare an ES default export; at run time the
// default import is the class itself.
// eslint-disable-next-line @typescript-eslint/consistent-type-imports -- the class type is only reachable this way
type PusherClass = typeof import("pusher-js").default;
const Pusher = PusherModule as unknown as PusherClass;
export type Pusher = InstanceType<PusherClass>;

export interface PusherClient {
  pusher: Pusher;
  socketId: string;
  /** Subscribes and resolves on success; rejects with the error status on failure. */
  subscribe(channel: string): Promise<Channel>;
  /** Resolves with the data of the next `event` on `channel`. */
  next<T = any>(channel: Channel, event: string, timeoutMs?: number): Promise<T>;
}

/**
 * Connects pusher-js to the server at `baseUrl`, authenticating channels with `token`; resolves
 * once connected (a client that does not connect within 30 s is disconnected and rejected).
 */
export async function openPusher(baseUrl: string, key: string, token: string): Promise<Pusher> {
  const url = new URL(baseUrl);
  const pusher = new Pusher(key, {
    cluster: "local",
    wsHost: url.hostname,
    wsPort: Number(url.port),
    forceTLS: false,
    enabledTransports: ["ws"],
    disableStats: true,
    channelAuthorization: { endpoint: `${baseUrl}/api/broadcasting/auth`, transport: "ajax", headers: { Authorization: `Bearer ${token}` } },
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      pusher.disconnect();
      reject(new Error("pusher-js did not connect within 30 s"));
    }, 30_000);
    pusher.connection.bind("connected", () => {
      clearTimeout(timer);
      resolve();
    });
  });
  return pusher;
}

/** Connects pusher-js to the test server, authenticating channels with `token`; disconnected at the test's end. */
export async function connectPusher(t: Test, baseUrl: string, key: string, token: string): Promise<PusherClient> {
  const pusher = await openPusher(baseUrl, key, token);
  t.teardown(() => pusher.disconnect());
  return {
    pusher,
    socketId: pusher.connection.socket_id,
    subscribe: (name) =>
      new Promise((resolve, reject) => {
        const channel = pusher.subscribe(name);
        channel.bind("pusher:subscription_succeeded", () => resolve(channel));
        channel.bind("pusher:subscription_error", (error: { status?: number; type?: string }) =>
          reject(Object.assign(new Error(`subscription to ${name} failed`), { status: error.status })),
        );
      }),
    next: (channel, event, timeoutMs = 60_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${event} on ${channel.name} within ${timeoutMs} ms`)), timeoutMs);
        const handler = (data: unknown) => {
          clearTimeout(timer);
          channel.unbind(event, handler);
          resolve(data as never);
        };
        channel.bind(event, handler);
      }),
  };
}

export interface RawSocket {
  ws: WebSocket;
  frames: { event: string; channel?: string; data: unknown }[];
  send(event: string, data: unknown): void;
  /** Resolves with the first frame (received so far or later) whose event is `event`. */
  waitFor(event: string, timeoutMs?: number): Promise<{ event: string; channel?: string; data: unknown }>;
  closed: Promise<{ code: number; reason: string }>;
}

/** A raw WebSocket to `/app/{key}` that records every frame. */
export async function rawSocket(t: Test, baseUrl: string, key: string, query = "protocol=7&client=js&version=8.4.0"): Promise<RawSocket> {
  const ws = new WebSocket(`${baseUrl.replace(/^http/, "ws")}/app/${key}?${query}`);
  t.teardown(() => ws.terminate());
  const frames: RawSocket["frames"] = [];
  const waiters: { event: string; resolve: (f: RawSocket["frames"][number]) => void }[] = [];
  ws.on("message", (raw) => {
    const message = JSON.parse((raw as Buffer).toString("utf8")) as { event: string; channel?: string; data: unknown };
    const data = typeof message.data === "string" ? JSON.parse(message.data) : message.data;
    const frame = { ...message, data };
    frames.push(frame);
    for (const waiter of waiters.filter((w) => w.event === frame.event)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve(frame);
    }
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on("close", (code, reason) => resolve({ code, reason: String(reason) })));
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  return {
    ws,
    frames,
    closed,
    send: (event, data) => ws.send(JSON.stringify({ event, data })),
    waitFor: (event, timeoutMs = 60_000) => {
      const seen = frames.find((f) => f.event === event);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${event} frame within ${timeoutMs} ms`)), timeoutMs);
        waiters.push({ event, resolve: (f) => (clearTimeout(timer), resolve(f)) });
      });
    },
  };
}
