/**
 * The in-process event hub: turns the `realtime` NOTIFY stream into events and hands each
 * to the subscribers of its channel. The WebSocket server subscribes per Pusher channel,
 * the job awaiter per job; both share the process's one LISTEN connection.
 */
import type { Logger } from "../logger.ts";
import type { DatabasePool } from "../db/pool.ts";
import type { ListenGap, PgListener } from "./listener.ts";
import { decodeEvent, REALTIME_CHANNEL, type RealtimeEvent } from "./publish.ts";

type EventHandler = (event: RealtimeEvent) => void;

export class EventHub {
  readonly #listener: PgListener;
  readonly #pool: DatabasePool;
  readonly #log: Logger;
  readonly #byChannel = new Map<string, Set<EventHandler>>();
  readonly #all = new Set<EventHandler>();
  #unsubscribe: (() => void) | undefined;
  /** Events are dispatched strictly in NOTIFY order, even when one must be loaded by reference. */
  #chain: Promise<void> = Promise.resolve();

  constructor(listener: PgListener, pool: DatabasePool, log: Logger) {
    this.#listener = listener;
    this.#pool = pool;
    this.#log = log;
  }

  /** Starts receiving from the listener. */
  start(): void {
    this.#unsubscribe ??= this.#listener.subscribe(REALTIME_CHANNEL, (payload) => {
      this.#chain = this.#chain.then(() => this.#receive(payload));
    });
  }

  stop(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
  }

  /** Calls `handler` for every event on `channel`; returns the unsubscribe function. */
  on(channel: string, handler: EventHandler): () => void {
    let set = this.#byChannel.get(channel);
    if (!set) {
      set = new Set();
      this.#byChannel.set(channel, set);
    }
    set.add(handler);
    return () => {
      set.delete(handler);
      if (set.size === 0 && this.#byChannel.get(channel) === set) this.#byChannel.delete(channel);
    };
  }

  /** Calls `handler` for every event on any channel. */
  onAny(handler: EventHandler): () => void {
    this.#all.add(handler);
    return () => this.#all.delete(handler);
  }

  /** Calls `handler` with each raw payload NOTIFYed on `channel` (caches, not realtime events); returns the unsubscribe function. */
  listen(channel: string, handler: (payload: string) => void): () => void {
    return this.#listener.subscribe(channel, handler);
  }

  /**
   * Holds the shared advisory lock `key` on the LISTEN connection (counted; see
   * `PgListener.holdShared`): how a process tells the database it watches a channel whose
   * events are sent only while someone does. Resolves once the lock is held.
   */
  holdShared(key: bigint): Promise<void> {
    return this.#listener.holdShared(key);
  }

  /** Gives up one hold of `key`. */
  releaseShared(key: bigint): void {
    this.#listener.releaseShared(key);
  }

  /** Registers a callback for listener reconnects (events of the gap may have been missed). */
  onReconnect(handler: (gap: ListenGap) => void): () => void {
    return this.#listener.onReconnect(handler);
  }

  /** Handlers registered on `channel`, and reconnect callbacks (gauges for leaks: each waiter removes its own). */
  handlerCount(channel: string): { channel: number; reconnect: number } {
    return { channel: this.#byChannel.get(channel)?.size ?? 0, reconnect: this.#listener.reconnectHandlerCount };
  }

  /** Whether the underlying LISTEN connection is up. */
  get connected(): boolean {
    return this.#listener.connected;
  }

  async #receive(payload: string): Promise<void> {
    let event: RealtimeEvent | undefined;
    try {
      event = await decodeEvent(this.#pool, payload);
    } catch (error) {
      this.#log.error({ err: error }, "could not decode realtime event");
      return;
    }
    if (!event) return;
    for (const handler of this.#byChannel.get(event.channel) ?? []) this.#dispatch(handler, event);
    for (const handler of this.#all) this.#dispatch(handler, event);
  }

  #dispatch(handler: EventHandler, event: RealtimeEvent): void {
    try {
      handler(event);
    } catch (error) {
      this.#log.error({ err: error, channel: event.channel }, "event handler failed");
    }
  }
}
