/**
 * The WebSocket side of realtime: a Pusher protocol v7 server at `/app/{key}`, so pusher-js
 * and laravel-echo connect unchanged. Sockets subscribe to channels; the process's event
 * hub (fed by LISTEN/NOTIFY) delivers each event once per channel, and the frame is
 * serialised once and written to every subscribed socket.
 *
 * Glossary: a *connection* is one client socket with its socket id; a *channel* is a
 * Pusher channel name such as `private-job.12`. A private subscription keeps the grant it was
 * signed with (grants.ts), so it is re-authorized when access changes (reauthorize.ts).
 */
import { randomInt } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocket, WebSocketServer } from "ws";
import type { AppDeps } from "../context.ts";
import type { ListenGap } from "../../shared/events/listener.ts";
import { channelNamePattern, verifyChannelSignature } from "./channelAuth.ts";
import { ChannelWatches } from "./channelWatches.ts";
import { parseGrant } from "./grants.ts";
import { prepareTextFrame, writePrepared } from "./preparedFrame.ts";
import { closeCodes, errorFrame, frame, parseClientFrame, PROTOCOL_VERSION, type ClientFrame } from "./protocol.ts";
import { MAX_HELD_FRAMES, SubscriptionReauthorizer, type Subscription, type SubscriptionSet } from "./reauthorize.ts";

const MAX_CHANNELS_PER_CONNECTION = 100;

/**
 * The event every subscribed channel gets after this process's LISTEN connection was away:
 * events published meanwhile never reached it, so a client re-reads what it shows (the board,
 * the job, the deployment log). Data: `{since, until}`, ISO 8601.
 */
export const EVENTS_MISSED = "EventsMissed";
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

/** The app key of a path segment, percent-decoded; null when its escapes are malformed (`%E0`). */
function decodeKey(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

class Connection {
  readonly socketId = `${randomInt(1, 2 ** 31)}.${randomInt(1, 2 ** 31)}`;
  readonly channels = new Set<string>();
  /** The private channels' subscriptions, with their grants. */
  readonly subscriptions = new Map<string, Subscription>();
  lastSeen = Date.now();
  pingSentAt: number | undefined;
  readonly ws: WebSocket;
  constructor(ws: WebSocket) {
    this.ws = ws;
  }
}

/** A private subscription of a connection. */
interface OwnedSubscription extends Subscription {
  connection: Connection;
}

export class RealtimeServer implements SubscriptionSet {
  readonly #deps: AppDeps;
  readonly #wss = new WebSocketServer({
    noServer: true,
    maxPayload: 16 * 1024,
    perMessageDeflate: false,
    // The server keeps its own set of connections; ws's would be a second one per socket.
    clientTracking: false,
  });
  readonly #members = new Map<string, Set<Connection>>();
  readonly #hubSubscriptions = new Map<string, () => void>();
  /** The advisory locks of watched channels with subscribers here (channelWatches.ts). */
  readonly #watches: ChannelWatches;
  readonly #connections = new Set<Connection>();
  readonly #timer: NodeJS.Timeout;
  /** Checks private subscriptions again when access changes. */
  readonly reauthorizer: SubscriptionReauthorizer;
  readonly #offReconnect: () => void;

  constructor(deps: AppDeps) {
    this.#deps = deps;
    const activityMs = deps.config.realtime.activityTimeoutS * 1000;
    const pongMs = deps.config.realtime.pongTimeoutS * 1000;
    this.#timer = setInterval(() => this.#checkActivity(activityMs, pongMs), Math.min(10_000, activityMs / 4, pongMs / 4));
    this.#timer.unref();
    this.#watches = new ChannelWatches(deps.hub);
    this.reauthorizer = new SubscriptionReauthorizer(deps, this);
    this.reauthorizer.start();
    // After the re-authorizer's own reconnect callback, which holds every private
    // subscription's events for a check: the notice waits in line with them and reaches only
    // subscriptions whose access stands.
    this.#offReconnect = deps.hub.onReconnect((gap) => this.#announceGap(gap));
  }

  /** Open connections on this process. */
  get connectionCount(): number {
    return this.#connections.size;
  }

  /** Takes over an HTTP upgrade for `/app/{key}`; returns false for other paths, and for a target that is no URL path. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    // Neither may throw: this runs in the server's upgrade listener, where nothing catches (the
    // process would end). URL.parse answers null for a target such as `//[`.
    const url = URL.parse(req.url ?? "/", "http://localhost");
    const match = url && /^\/app\/([^/]+)$/.exec(url.pathname);
    const key = match && decodeKey(match[1]!);
    if (!url || key === null) return false;
    this.#wss.handleUpgrade(req, socket, head, (ws) => this.#accept(ws, key, url));
    return true;
  }

  /** Closes every connection with "reconnect now", so clients move to another web process. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.reauthorizer.stop();
    this.#offReconnect();
    for (const connection of this.#connections) connection.ws.close(closeCodes.genericReconnect, "Server shutting down");
    for (const unsubscribe of this.#hubSubscriptions.values()) unsubscribe();
    this.#hubSubscriptions.clear();
    this.#watches.close();
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
  }

  #accept(ws: WebSocket, key: string, url: URL): void {
    const { realtime } = this.#deps.config;
    if (key !== realtime.key) {
      ws.send(errorFrame(`Could not find app by key ${key}`, closeCodes.applicationDoesNotExist));
      ws.close(closeCodes.applicationDoesNotExist, "Application does not exist");
      return;
    }
    const protocol = Number(url.searchParams.get("protocol") ?? PROTOCOL_VERSION);
    if (!Number.isInteger(protocol) || protocol < 5 || protocol > PROTOCOL_VERSION) {
      ws.send(errorFrame(`Unsupported protocol version ${protocol}`, closeCodes.unsupportedProtocol));
      ws.close(closeCodes.unsupportedProtocol, "Unsupported protocol version");
      return;
    }
    const connection = new Connection(ws);
    this.#connections.add(connection);
    this.#deps.metrics.realtimeConnections += 1;
    ws.on("message", (data, isBinary) => {
      connection.lastSeen = Date.now();
      connection.pingSentAt = undefined;
      if (isBinary) return void ws.send(errorFrame("Binary frames are not supported"));
      const message = parseClientFrame(Buffer.isBuffer(data) ? data.toString("utf8") : Buffer.concat(data as Buffer[]).toString("utf8"));
      if (!message) return void ws.send(errorFrame("Malformed frame: expected JSON {event, data}"));
      this.#handle(connection, message);
    });
    ws.on("close", () => this.#drop(connection));
    ws.on("error", () => ws.terminate());
    ws.send(frame("pusher:connection_established", { socket_id: connection.socketId, activity_timeout: realtime.activityTimeoutS }));
  }

  #handle(connection: Connection, message: ClientFrame): void {
    const data = (message.data ?? {}) as Record<string, unknown>;
    switch (message.event) {
      case "pusher:ping":
        connection.ws.send(frame("pusher:pong", {}));
        return;
      case "pusher:pong":
        return;
      case "pusher:subscribe":
        this.#subscribe(connection, data);
        return;
      case "pusher:unsubscribe":
        if (typeof data.channel === "string") this.#leave(connection, data.channel);
        return;
      default:
        if (message.event.startsWith("client-")) {
          connection.ws.send(errorFrame("Client events are not enabled for this app", 4301));
        } else {
          connection.ws.send(errorFrame(`Unknown event ${message.event}`));
        }
    }
  }

  #subscribe(connection: Connection, data: Record<string, unknown>): void {
    const channel = data.channel;
    const reject = (error: string, status: number, name = typeof channel === "string" ? channel : "") =>
      connection.ws.send(frame("pusher:subscription_error", { type: "AuthError", error, status }, name));
    if (typeof channel !== "string" || !channelNamePattern.test(channel)) return reject("Invalid channel name", 400);
    if (channel.startsWith("presence-") || channel.startsWith("private-encrypted-")) {
      return reject("Presence and encrypted channels are not supported", 400);
    }
    const grant = channel.startsWith("private-") ? parseGrant(data.channel_data) : undefined;
    if (channel.startsWith("private-")) {
      const { key, secret } = this.#deps.config.realtime;
      const channelData = typeof data.channel_data === "string" ? data.channel_data : undefined;
      if (!grant || !verifyChannelSignature(key, secret, connection.socketId, channel, data.auth, channelData)) {
        return reject("Invalid signature: authorize the channel at /api/broadcasting/auth and send its auth and channel_data", 401);
      }
    }
    if (!connection.channels.has(channel) && connection.channels.size >= MAX_CHANNELS_PER_CONNECTION) {
      return reject(`A connection may subscribe to at most ${MAX_CHANNELS_PER_CONNECTION} channels`, 429);
    }
    if (grant) {
      // Checked before it succeeds: a signed grant may be older than the end of its access.
      // Its success and its events wait for the check (reauthorize.ts); a denial ends it (403).
      // On a watched channel the check starts once this process's lock is held.
      const subscription: OwnedSubscription = { channel, grant, held: [frame("pusher_internal:subscription_succeeded", {}, channel)], connection };
      connection.subscriptions.set(channel, subscription);
      this.#join(connection, channel);
      this.#watches.whenReady(channel, () => this.reauthorizer.admit(subscription));
      return;
    }
    this.#join(connection, channel);
    this.#watches.whenReady(channel, () => {
      if (connection.channels.has(channel) && connection.ws.readyState === WebSocket.OPEN) {
        connection.ws.send(frame("pusher_internal:subscription_succeeded", {}, channel));
      }
    });
  }

  #join(connection: Connection, channel: string): void {
    connection.channels.add(channel);
    let members = this.#members.get(channel);
    if (!members) {
      members = new Set();
      this.#members.set(channel, members);
      this.#hubSubscriptions.set(channel, this.#deps.hub.on(channel, (event) => this.#broadcast(channel, event.event, event.data)));
      this.#watches.start(channel);
    }
    members.add(connection);
  }

  #leave(connection: Connection, channel: string): void {
    connection.channels.delete(channel);
    connection.subscriptions.delete(channel);
    const members = this.#members.get(channel);
    if (!members) return;
    members.delete(connection);
    if (members.size === 0) {
      this.#members.delete(channel);
      this.#hubSubscriptions.get(channel)?.();
      this.#hubSubscriptions.delete(channel);
      this.#watches.stop(channel);
    }
  }

  #drop(connection: Connection): void {
    if (!this.#connections.delete(connection)) return;
    this.#deps.metrics.realtimeConnections -= 1;
    for (const channel of [...connection.channels]) this.#leave(connection, channel);
  }

  #broadcast(channel: string, event: string, data: unknown): void {
    const members = this.#members.get(channel);
    if (!members) return;
    const text = frame(event, data, channel);
    // Encoded and framed once: ws would turn a string into UTF-8 bytes and build a header
    // again for every socket (preparedFrame.ts).
    const bytes = Buffer.from(text);
    const prepared = prepareTextFrame(bytes);
    for (const connection of members) {
      const { ws } = connection;
      if (ws.readyState !== WebSocket.OPEN) continue;
      const held = connection.subscriptions.get(channel)?.held;
      if (held) {
        // Access is being checked: the frame goes out only if it stands.
        if (held.length < MAX_HELD_FRAMES) held.push(text);
        else ws.close(closeCodes.overCapacity, "Too many events while access was checked");
        continue;
      }
      if (ws.bufferedAmount > MAX_BUFFERED_BYTES) {
        ws.close(closeCodes.overCapacity, "Client is not reading fast enough");
        continue;
      }
      writePrepared(ws, prepared, bytes);
    }
  }

  /** Tells every subscribed channel that its events of `gap` may be lost (EVENTS_MISSED). */
  #announceGap(gap: ListenGap): void {
    const data = { since: gap.since.toISOString(), until: gap.until.toISOString() };
    for (const [channel, members] of this.#members) {
      const text = frame(EVENTS_MISSED, data, channel);
      for (const connection of members) {
        if (connection.ws.readyState !== WebSocket.OPEN) continue;
        const held = connection.subscriptions.get(channel)?.held;
        if (held) held.push(text);
        else connection.ws.send(text);
      }
    }
  }

  *subscriptions(): Iterable<Subscription> {
    for (const connection of this.#connections) {
      for (const subscription of connection.subscriptions.values()) {
        // Not yet admitted: its channel's lock is on its way, and the check follows it.
        if (this.#watches.ready(subscription.channel)) yield subscription;
      }
    }
  }

  isOpen(subscription: Subscription): boolean {
    const { connection } = subscription as OwnedSubscription;
    return this.#connections.has(connection) && connection.subscriptions.get(subscription.channel) === subscription;
  }

  release(subscription: Subscription): void {
    const held = subscription.held ?? [];
    subscription.held = null;
    const { ws } = (subscription as OwnedSubscription).connection;
    for (const text of held) if (ws.readyState === WebSocket.OPEN) ws.send(text);
  }

  revoke(subscription: Subscription): void {
    const { connection } = subscription as OwnedSubscription;
    subscription.held = null;
    this.#leave(connection, subscription.channel);
    if (connection.ws.readyState !== WebSocket.OPEN) return;
    connection.ws.send(frame("pusher:subscription_error", { type: "AuthError", error: "Access to this channel has ended", status: 403 }, subscription.channel));
  }

  #checkActivity(activityMs: number, pongMs: number): void {
    const now = Date.now();
    for (const connection of this.#connections) {
      if (connection.pingSentAt !== undefined) {
        if (now - connection.pingSentAt > pongMs) connection.ws.close(closeCodes.pongNotReceived, "Pong reply not received");
      } else if (now - connection.lastSeen > activityMs) {
        connection.pingSentAt = now;
        connection.ws.send(frame("pusher:ping", {}));
      }
    }
  }
}
