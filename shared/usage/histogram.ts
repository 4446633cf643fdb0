/**
 * Daily histograms of timing measures, the roll-up GET /admin/performance-metrics reads, so
 * that a percentile over a week costs one row per day, metric and route instead of a sort of
 * every measure.
 *
 * Glossary: a *bucket* is the range of values between two powers of GAMMA (each bucket
 * spans 5 % of its values), numbered by `bucketOf`; a *cell* is one bucket of one
 * (day, metric, route, device class) with its count and the smallest and largest value it
 * holds; a *histogram* is the occupied cells of one (day, metric, route, device class) in
 * bucket order, stored as one row. A percentile is read as PostgreSQL's `percentile_cont`
 * would compute it, with the values inside a cell taken as evenly spread between its
 * smallest and largest: exact when they are (one or two distinct values, consecutive
 * integers), otherwise within the cell's 5 % (in practice a small fraction of that: the values of
 * a busy cell are spread fairly evenly). Every cell is kept per device class and once
 * more under ALL_DEVICES, so a read without a device filter does not add up the classes.
 */

/** Ratio between a bucket's upper and lower bound. */
export const GAMMA = 1.05;
const LOG_GAMMA = Math.log(GAMMA);
/** Bucket of values too small to matter (0 included): below a microsecond or 1e-6 CLS. */
export const ZERO_BUCKET = -1000;
/** The device class of cells that count every class. */
export const ALL_DEVICES = "*";

/** The bucket of `value` (values ≥ 0). */
export function bucketOf(value: number): number {
  return value < 1e-6 ? ZERO_BUCKET : Math.floor(Math.log(value) / LOG_GAMMA);
}

/** One cell of a histogram: where it is and what it holds. */
export interface HistogramCell {
  day: string;
  name: string;
  route: string;
  device_class: string;
  bucket: number;
  count: number;
  min_value: number;
  max_value: number;
}

/** Cells accumulated in memory between writes (see PerformanceRollup). */
export class CellAccumulator {
  #cells = new Map<string, HistogramCell>();

  /** Counts one measure of `day` (YYYY-MM-DD) in its device class's cell and in the all-devices cell. */
  add(day: string, measure: { name: string; value: number; route: string; device_class: string }): void {
    const bucket = bucketOf(measure.value);
    this.#addTo(day, measure.name, measure.route, measure.device_class, bucket, measure.value);
    this.#addTo(day, measure.name, measure.route, ALL_DEVICES, bucket, measure.value);
  }

  #addTo(day: string, name: string, route: string, deviceClass: string, bucket: number, value: number): void {
    this.merge({ day, name, route, device_class: deviceClass, bucket, count: 1, min_value: value, max_value: value });
  }

  /** Adds `cell` (taken over: not copied) to the one with the same key. */
  merge(cell: HistogramCell): void {
    const key = `${cell.day}\u0000${cell.name}\u0000${cell.route}\u0000${cell.device_class}\u0000${cell.bucket}`;
    const held = this.#cells.get(key);
    if (!held) this.#cells.set(key, cell);
    else {
      held.count += cell.count;
      held.min_value = Math.min(held.min_value, cell.min_value);
      held.max_value = Math.max(held.max_value, cell.max_value);
    }
  }

  get size(): number {
    return this.#cells.size;
  }

  /** The cells gathered so far, leaving the accumulator empty. */
  take(): HistogramCell[] {
    const cells = [...this.#cells.values()];
    this.#cells = new Map();
    return cells;
  }
}

/** The cells of one (day, metric, route, device class) in bucket order, as stored. */
export interface Histogram {
  day: string;
  name: string;
  route: string;
  device_class: string;
  buckets: number[];
  counts: number[];
  min_values: number[];
  max_values: number[];
}

/** Groups cells into histograms (cells of one key are expected once each, as `take` gives them). */
export function toHistograms(cells: readonly HistogramCell[]): Histogram[] {
  const byKey = new Map<string, HistogramCell[]>();
  for (const cell of cells) {
    const key = `${cell.day}\u0000${cell.name}\u0000${cell.route}\u0000${cell.device_class}`;
    const list = byKey.get(key);
    if (list) list.push(cell);
    else byKey.set(key, [cell]);
  }
  return [...byKey.values()].map((list) => {
    list.sort((a, b) => a.bucket - b.bucket);
    const first = list[0]!;
    return {
      day: first.day,
      name: first.name,
      route: first.route,
      device_class: first.device_class,
      buckets: list.map((c) => c.bucket),
      counts: list.map((c) => c.count),
      min_values: list.map((c) => c.min_value),
      max_values: list.map((c) => c.max_value),
    };
  });
}

/**
 * `percentile_cont(p)` for each of `ps` over a histogram's cells (in bucket order): for
 * h = p·(n − 1), the value at rank floor(h) plus the fraction of h towards the next rank;
 * a rank's value is interpolated between its cell's smallest and largest value.
 */
export function histogramPercentiles(counts: readonly number[], minValues: readonly number[], maxValues: readonly number[], ps: readonly number[]): number[] {
  const n = counts.reduce((a, b) => a + b, 0);
  if (n === 0) return ps.map(() => NaN);
  const valueAt = (rank: number): number => {
    let start = 0;
    for (let i = 0; i < counts.length; i += 1) {
      const count = counts[i]!;
      if (rank < start + count) return count === 1 ? minValues[i]! : minValues[i]! + ((maxValues[i]! - minValues[i]!) * (rank - start)) / (count - 1);
      start += count;
    }
    return maxValues[maxValues.length - 1]!;
  };
  return ps.map((p) => {
    const h = p * (n - 1);
    const lo = Math.floor(h);
    const low = valueAt(lo);
    return h === lo ? low : low + (h - lo) * (valueAt(Math.min(lo + 1, n - 1)) - low);
  });
}
