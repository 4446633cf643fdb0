/**
 * Rate limits shared by every web process, counted in PostgreSQL (DESIGN §7).
 *
 * Counting each request with a database write would add a round trip to every request, so
 * a process *leases* a slice of a key's hourly budget at once (`rate_limit_take`, one
 * statement) and spends it locally. The sum of all leases never exceeds the limit, so the
 * limit holds exactly across processes; small limits lease one unit at a time. Unused
 * leases are handed back when the process stops.
 *
 * Login attempts use the same table with their own keys and window: each attempt is
 * checked and counted on all its keys in one statement (`login_attempt_take`).
 */
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods, type DatabasePool } from "./db/pool.ts";

export interface LimitState {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** End of the current window. */
  resetAt: Date;
  retryAfterS: number;
}

interface Entry {
  windowStart: number;
  /** Units leased from the shared budget and not yet spent. */
  leased: number;
  /** The shared count after our last lease (includes every process's leases). */
  total: number;
  exhausted: boolean;
  pending: Promise<void> | undefined;
}

const takeRow = z.object({ granted: z.number(), total: z.number() });

/** Length of a request-budget window: limits are per hour (DESIGN §7). */
export const RATE_LIMIT_WINDOW_S = 3600;

/** How many units to lease at once for a limit. */
export const leaseSize = (limit: number) => Math.max(1, Math.min(100, Math.floor(limit / 50)));

export class RateLimiter {
  readonly #pool: DatabasePool;
  readonly #windowS: number;
  readonly #entries = new Map<string, Entry>();
  #currentWindow = 0;

  constructor(pool: DatabasePool, windowS = RATE_LIMIT_WINDOW_S) {
    this.#pool = pool;
    this.#windowS = windowS;
  }

  /** Spends one unit of `key`'s budget of `limit` per window. */
  async hit(key: string, limit: number): Promise<LimitState> {
    const entry = this.#entry(key);
    while (entry.leased === 0 && !entry.exhausted) {
      entry.pending ??= this.#lease(key, entry, limit).finally(() => (entry.pending = undefined));
      await entry.pending;
    }
    return this.#spend(entry, limit);
  }

  /**
   * `hit` without waiting: spends one unit when this process holds a leased one (or knows the
   * budget spent), and answers undefined, spending nothing, when a lease must be taken first
   * (then call `hit`). Most requests take this path, which needs no promise.
   */
  tryHit(key: string, limit: number): LimitState | undefined {
    const entry = this.#entry(key);
    return entry.leased === 0 && !entry.exhausted ? undefined : this.#spend(entry, limit);
  }

  /** The entry of `key` in the current window. */
  #entry(key: string): Entry {
    const windowStart = Math.floor(Date.now() / 1000 / this.#windowS) * this.#windowS;
    if (windowStart !== this.#currentWindow) {
      this.#entries.clear(); // a new window: every budget starts again
      this.#currentWindow = windowStart;
    }
    let entry = this.#entries.get(key);
    if (!entry) {
      entry = { windowStart, leased: 0, total: 0, exhausted: false, pending: undefined };
      this.#entries.set(key, entry);
    }
    return entry;
  }

  #spend(entry: Entry, limit: number): LimitState {
    const windowStart = entry.windowStart;
    const resetAt = new Date((windowStart + this.#windowS) * 1000);
    const retryAfterS = Math.max(1, Math.ceil((resetAt.getTime() - Date.now()) / 1000));
    if (entry.leased === 0) return { allowed: false, limit, remaining: 0, resetAt, retryAfterS };
    entry.leased -= 1;
    return { allowed: true, limit, remaining: Math.max(0, limit - entry.total + entry.leased), resetAt, retryAfterS };
  }

  async #lease(key: string, entry: Entry, limit: number): Promise<void> {
    const { granted, total } = await this.#pool.one(sql.type(takeRow)`
      select granted, total from rate_limit_take(${key}, to_timestamp(${entry.windowStart}), ${leaseSize(limit)}, ${limit})`);
    entry.total = total;
    entry.leased += granted;
    entry.exhausted = granted === 0;
  }

  /** Hands unspent leases back to the shared budget (on shutdown). */
  async close(): Promise<void> {
    const returns = [...this.#entries].filter(([, e]) => e.leased > 0 && e.windowStart === this.#currentWindow);
    this.#entries.clear();
    for (const [key, entry] of returns) {
      await this.#pool.query(sql.type(ignoredRow)`
        update rate_limit_counters set count = greatest(0, count - ${entry.leased})
        where key = ${key} and window_start = to_timestamp(${entry.windowStart})`);
    }
  }
}

/** The outcome of `AttemptCounter.take`. */
export type AttemptTake = { allowed: true; windowStart: number } | { allowed: false; retryAfterS: number };

/**
 * Login attempts counted per key in `windowS`-long windows. An attempt is counted *before*
 * the password is checked, on all its keys at once and only when none is at its limit, so
 * N parallel guesses cannot all pass a check made before any of them was counted.
 */
export class AttemptCounter {
  readonly #pool: DatabasePool;
  /** Attempts allowed per (e-mail, IP) pair and window (LOGIN_MAX_ATTEMPTS). */
  readonly max: number;
  readonly #windowS: number;

  constructor(pool: DatabasePool, max: number, windowS: number) {
    this.#pool = pool;
    this.max = max;
    this.#windowS = windowS;
  }

  #window(): number {
    return Math.floor(Date.now() / 1000 / this.#windowS) * this.#windowS;
  }

  /**
   * Counts one attempt on every key unless one of them has reached its limit (then nothing is
   * counted). `conn` runs it inside a caller's transaction (the count then commits with it).
   */
  async take(limits: readonly { key: string; max: number }[], conn: CommonQueryMethods = this.#pool): Promise<AttemptTake> {
    const windowStart = this.#window();
    const full = await conn.oneFirst(sql.type(z.object({ full: z.number() }))`
      select login_attempt_take(${sql.array(limits.map((l) => l.key), "text")}, ${sql.array(limits.map((l) => l.max), "int4")},
        to_timestamp(${windowStart})) as full`);
    if (full === 0) return { allowed: true, windowStart };
    return { allowed: false, retryAfterS: Math.max(1, windowStart + this.#windowS - Math.floor(Date.now() / 1000)) };
  }

  /** Takes back an attempt counted by `take` in `windowStart` (it succeeded). */
  async giveBack(key: string, windowStart: number, conn: CommonQueryMethods = this.#pool): Promise<void> {
    await conn.query(sql.type(ignoredRow)`
      update rate_limit_counters set count = greatest(0, count - 1) where key = ${key} and window_start = to_timestamp(${windowStart})`);
  }

  /** Clears every count of `key` after a success. */
  async reset(key: string): Promise<void> {
    await this.#pool.query(sql.type(ignoredRow)`delete from rate_limit_counters where key = ${key}`);
  }
}
