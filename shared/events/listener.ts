/**
 * A dedicated LISTEN connection that survives database restarts.
 *
 * One per process: it LISTENs on every channel any subscriber asked for and reconnects
 * with exponential back-off and jitter when the connection drops (server restart, network
 * blip, `pg_terminate_backend`). After a reconnect it tells subscribers through
 * `onReconnect`, because notifications sent while it was away are lost for good and
 * whoever waits on one (a job awaiter, say) must re-read the state it waited for. A callback
 * that throws is logged; the others still run.
 *
 * It also holds shared session advisory locks for whoever asks (`holdShared`): a lock that
 * lives exactly as long as this connection tells the database "this process listens", which
 * is how the operator console's job notifications are sent only while one watches
 * (sql/migrations/0130). A lock lost with the connection is taken again on reconnect, after
 * LISTEN and before the reconnect callbacks run.
 */
import pg from "pg";
import type { Logger } from "../logger.ts";

type Handler = (payload: string) => void;

/** The time a LISTEN connection was away: notifications committed in it may never have arrived. */
export interface ListenGap {
  /** When the connection was found lost (a notification sent shortly before may be lost too). */
  since: Date;
  /** When LISTEN was in place again. */
  until: Date;
}

export class PgListener {
  readonly #url: string;
  readonly #log: Logger;
  readonly #handlers = new Map<string, Set<Handler>>();
  readonly #reconnectHandlers = new Set<(gap: ListenGap) => void>();
  #client: pg.Client | undefined;
  #stopped = false;
  #attempt = 0;
  /** When the current outage began; undefined while connected (or before the first connection). */
  #lostAt: Date | undefined;
  #timer: NodeJS.Timeout | undefined;
  #connecting: Promise<void> | undefined;
  /** The LISTEN statements sent on the current connection, one after another: pg wants one query at a time per client. */
  #queue: Promise<void> = Promise.resolve();
  /** Shared advisory locks held for callers: key → how many holds, and when the lock was taken. */
  readonly #locks = new Map<string, { holds: number; taken: Promise<void> }>();

  constructor(url: string, log: Logger) {
    this.#url = url;
    this.#log = log;
  }

  /** Connects and LISTENs; resolves once the first connection is up. */
  async start(): Promise<void> {
    await this.#connect();
  }

  /** Whether the LISTEN connection is currently up. */
  get connected(): boolean {
    return this.#client !== undefined;
  }

  /** Calls `handler` with each payload NOTIFYed on `channel`; returns the unsubscribe function. */
  subscribe(channel: string, handler: Handler): () => void {
    let set = this.#handlers.get(channel);
    if (!set) {
      set = new Set();
      this.#handlers.set(channel, set);
      if (this.#client) {
        this.#listen(this.#client, [channel]).catch((error: unknown) => {
          this.#log.warn({ err: error, channel }, "LISTEN failed; will retry on reconnect");
        });
      }
    }
    set.add(handler);
    return () => {
      set.delete(handler);
    };
  }

  /**
   * Holds the shared session advisory lock `key` on the LISTEN connection until `releaseShared`
   * (holds are counted). Resolves once the lock is granted, which waits for any transaction
   * holding the key exclusively; at once when the connection is down (the reconnect takes it,
   * before its callbacks tell subscribers that events may have been missed). Notifications
   * reach this process only after the wait, in order.
   */
  holdShared(key: bigint): Promise<void> {
    const name = key.toString();
    const held = this.#locks.get(name);
    if (held) {
      held.holds += 1;
      return held.taken;
    }
    const taken = this.#client ? this.#lockShared(this.#client, [name]) : Promise.resolve();
    this.#locks.set(name, { holds: 1, taken });
    return taken;
  }

  /** Gives up one hold of `key`; the lock itself goes with the last one. */
  releaseShared(key: bigint): void {
    const name = key.toString();
    const held = this.#locks.get(name);
    if (!held) return;
    held.holds -= 1;
    if (held.holds > 0) return;
    this.#locks.delete(name);
    const client = this.#client;
    if (!client) return;
    this.#send(client, async () => {
      await client.query("select pg_advisory_unlock_shared($1::bigint)", [name]);
    }).catch((error: unknown) => this.#log.warn({ err: error, key: name }, "could not release an advisory lock; it goes with the connection"));
  }

  /** Registers a callback run after every successful reconnect, with the time the connection was away. */
  onReconnect(handler: (gap: ListenGap) => void): () => void {
    this.#reconnectHandlers.add(handler);
    return () => this.#reconnectHandlers.delete(handler);
  }

  /** How many reconnect callbacks are registered (a gauge for leaks: each waiter removes its own). */
  get reconnectHandlerCount(): number {
    return this.#reconnectHandlers.size;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => {});
  }

  #connect(): Promise<void> {
    this.#connecting ??= this.#open().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  async #open(): Promise<void> {
    const client = new pg.Client({ connectionString: this.#url, keepAlive: true, application_name: "schemaforge-listener" });
    client.on("notification", (message) => {
      const handlers = this.#handlers.get(message.channel);
      if (!handlers) return;
      for (const handler of handlers) {
        try {
          handler(message.payload ?? "");
        } catch (error) {
          this.#log.error({ err: error, channel: message.channel }, "notification handler failed");
        }
      }
    });
    const onLost = (error?: Error) => {
      if (this.#client !== client) return;
      this.#client = undefined;
      client.removeAllListeners("notification");
      client.end().catch(() => {});
      if (this.#stopped) return;
      this.#lostAt = new Date();
      this.#log.warn({ err: error }, "LISTEN connection lost; reconnecting");
      this.#scheduleReconnect();
    };
    client.on("error", onLost);
    client.on("end", () => onLost());
    await client.connect();
    const channels = [...this.#handlers.keys()];
    if (channels.length) await client.query(channels.map((c) => `listen ${pg.escapeIdentifier(c)}`).join("; "));
    if (this.#stopped) {
      await client.end();
      return;
    }
    this.#client = client;
    this.#queue = Promise.resolve();
    const late = [...this.#handlers.keys()].filter((c) => !channels.includes(c));
    const listened = late.length ? this.#listen(client, late) : Promise.resolve();
    // The locks held for callers, queued at once (holds asked for from here on send their own
    // statement): after LISTEN, since a change notified once a lock is held must find this
    // connection listening, and before the reconnect callbacks, whose "events missed" must
    // come after it.
    let taken = Promise.resolve();
    if (this.#locks.size) {
      taken = this.#lockShared(client, [...this.#locks.keys()]);
      for (const held of this.#locks.values()) held.taken = taken;
    }
    await Promise.all([listened, taken]);
    const wasReconnect = this.#attempt > 0;
    this.#attempt = 0;
    if (wasReconnect) {
      const gap = { since: this.#lostAt ?? new Date(), until: new Date() };
      this.#lostAt = undefined;
      this.#log.info({ away_ms: gap.until.getTime() - gap.since.getTime() }, "LISTEN connection re-established");
      // Each on its own: one that throws must not keep the others (the realtime re-check, a
      // job's waiter) from running, nor fail this connect, which would reconnect once more.
      for (const handler of this.#reconnectHandlers) {
        try {
          handler(gap);
        } catch (error) {
          this.#log.error({ err: error }, "reconnect callback failed");
        }
      }
    }
  }

  /** LISTENs on `channels` once the statements sent before on `client` are done. */
  #listen(client: pg.Client, channels: string[]): Promise<void> {
    return this.#send(client, async () => {
      await client.query(channels.map((c) => `listen ${pg.escapeIdentifier(c)}`).join("; "));
    });
  }

  /**
   * Takes the shared advisory locks `keys` on `client`, after the statements sent before. Never
   * rejects: when it fails the connection is (or is made) lost, and the reconnect takes them
   * again and reports the gap.
   */
  #lockShared(client: pg.Client, keys: string[]): Promise<void> {
    return this.#send(client, async () => {
      await client.query("select pg_advisory_lock_shared(k) from unnest($1::bigint[]) k", [keys]);
    }).catch((error: unknown) => {
      // On a connection still up (a timeout, a cancel) the lock is not held and nobody would
      // know: ending the connection makes the reconnect take it and report the gap.
      this.#log.warn({ err: error }, "could not take an advisory lock; reconnecting to take it again");
      if (this.#client === client) client.end().catch(() => {});
    });
  }

  /** Runs `statement` on `client` once the statements sent before on it are done. */
  #send(client: pg.Client, statement: () => Promise<void>): Promise<void> {
    const sent = this.#queue.then(statement);
    this.#queue = sent.catch(() => {});
    return sent;
  }

  #scheduleReconnect(): void {
    this.#attempt += 1;
    const base = Math.min(30_000, 100 * 2 ** Math.min(this.#attempt, 9));
    const delay = base / 2 + Math.random() * (base / 2);
    this.#timer = setTimeout(() => {
      this.#connect().catch((error: unknown) => {
        this.#log.warn({ err: error, attempt: this.#attempt }, "LISTEN reconnect failed");
        if (!this.#stopped) this.#scheduleReconnect();
      });
    }, delay);
    this.#timer.unref();
  }
}
