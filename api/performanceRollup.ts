/**
 * The web process's share of the daily performance histograms (shared/usage/histogram.ts):
 * measures accepted by POST /performance-metrics and the sampled server timings are counted
 * into cells in memory, and every `flushMs` the cells go to the database in one statement.
 * Adding to shared cells on every request would make concurrent batches queue on the same
 * rows' locks until each commit; one write per process and interval does not. A read
 * (GET /admin/performance-metrics) writes this process's pending cells first, so it sees
 * what the process accepted; other processes' last interval shows up after their next write.
 */
import type { DatabasePool } from "../shared/db/pool.ts";
import type { Logger } from "../shared/logger.ts";
import { CellAccumulator } from "../shared/usage/histogram.ts";
import { addHistogramCells, type Measure } from "../shared/usage/performanceStore.ts";

export class PerformanceRollup {
  readonly #pool: DatabasePool;
  readonly #log: Logger;
  readonly #cells = new CellAccumulator();
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> = Promise.resolve();

  constructor(pool: DatabasePool, log: Logger, options: { flushMs?: number } = {}) {
    this.#pool = pool;
    this.#log = log;
    this.#timer = setInterval(() => void this.flush().catch(() => {}), options.flushMs ?? 1000);
    this.#timer.unref();
  }

  /** Counts measures stored now (their day is today's UTC date). */
  add(measures: readonly Measure[]): void {
    const day = new Date().toISOString().slice(0, 10);
    for (const measure of measures) this.#cells.add(day, measure);
  }

  /**
   * Writes the cells counted so far (after any write under way, so writes never overlap).
   * @throws when the database refuses them; they are kept for the next attempt then.
   */
  flush(): Promise<void> {
    this.#writing = this.#writing.catch(() => {}).then(async () => {
      if (this.#cells.size === 0) return;
      const cells = this.#cells.take();
      try {
        await addHistogramCells(this.#pool, cells);
      } catch (error) {
        this.#log.warn({ err: error, cells: cells.length }, "could not store performance histogram cells; kept for the next write");
        for (const cell of cells) this.#cells.merge(cell);
        throw error;
      }
    });
    return this.#writing;
  }

  /** Stops the timer and writes what is left. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.flush().catch(() => {});
  }
}
