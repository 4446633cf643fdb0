/**
 * The server's own request timings, stored beside the client measures (name `server`,
 * device class `server`) so GET /admin/performance-metrics shows both. Requests are only
 * sampled into memory on the hot path; every `flushMs` the samples go to the database in
 * one insert, at most `perRoute` per route template and interval (reservoir sampling keeps
 * the sample fair under load), and into the process's histogram cells.
 */
import type { DatabasePool } from "../shared/db/pool.ts";
import type { Logger } from "../shared/logger.ts";
import { insertMeasures, type Measure } from "../shared/usage/performanceStore.ts";
import type { PerformanceRollup } from "./performanceRollup.ts";

export class ServerTimings {
  readonly #pool: DatabasePool;
  readonly #log: Logger;
  readonly #rollup: PerformanceRollup;
  readonly #perRoute: number;
  #samples = new Map<string, { seen: number; values: number[] }>();
  #timer: NodeJS.Timeout | undefined;

  constructor(pool: DatabasePool, log: Logger, rollup: PerformanceRollup, options: { flushMs?: number; perRoute?: number } = {}) {
    this.#pool = pool;
    this.#rollup = rollup;
    this.#log = log;
    this.#perRoute = options.perRoute ?? 100;
    this.#timer = setInterval(() => void this.flush(), options.flushMs ?? 10_000);
    this.#timer.unref();
  }

  /** Samples one request of route template `route` that took `ms`. */
  record(route: string, ms: number): void {
    let entry = this.#samples.get(route);
    if (!entry) this.#samples.set(route, (entry = { seen: 0, values: [] }));
    entry.seen += 1;
    if (entry.values.length < this.#perRoute) entry.values.push(ms);
    else {
      const slot = Math.floor(Math.random() * entry.seen);
      if (slot < this.#perRoute) entry.values[slot] = ms;
    }
  }

  /** Writes the samples gathered since the last flush. */
  async flush(): Promise<void> {
    const samples = this.#samples;
    this.#samples = new Map();
    const measures: Measure[] = [];
    for (const [route, { values }] of samples) for (const value of values) measures.push({ name: "server", value, route: route.slice(0, 200), device_class: "server" });
    if (measures.length === 0) return;
    try {
      await insertMeasures(this.#pool, measures);
      this.#rollup.add(measures);
    } catch (error) {
      this.#log.debug({ err: error }, "could not store server timings");
    }
  }

  /** Stops the timer and writes what is left. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.flush();
  }
}
