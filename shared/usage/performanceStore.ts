/**
 * SQL of performance measures: batches in with one multi-row insert, their daily histogram
 * cells added in batches, percentiles out (p50, p75, p95 per day, metric and route, from
 * the histograms).
 */
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods, type DatabasePool } from "../db/pool.ts";
import { ALL_DEVICES, histogramPercentiles, toHistograms, type HistogramCell } from "./histogram.ts";

/** One measure as stored. */
export interface Measure {
  name: string;
  value: number;
  route: string;
  device_class: string;
}

/** Inserts `measures` in one statement. */
export async function insertMeasures(conn: CommonQueryMethods, measures: readonly Measure[]): Promise<void> {
  if (measures.length === 0) return;
  await conn.query(sql.type(ignoredRow)`
    insert into performance_measures (name, value, route, device_class)
    select * from unnest(${sql.array(measures.map((m) => m.name), "text")}, ${sql.array(measures.map((m) => m.value), "float8")},
      ${sql.array(measures.map((m) => m.route), "text")}, ${sql.array(measures.map((m) => m.device_class), "text")})`);
}

/**
 * Adds histogram cells to the stored histograms, in one statement (a new histogram is
 * inserted, an existing one merged bucket by bucket); the rows are locked in key order, so
 * concurrent writers cannot deadlock.
 */
export async function addHistogramCells(conn: CommonQueryMethods, cells: readonly HistogramCell[]): Promise<void> {
  if (cells.length === 0) return;
  const histograms = toHistograms(cells);
  await conn.query(sql.type(ignoredRow)`
    insert into performance_histograms as h (device_class, day, name, route, total, buckets, counts, min_values, max_values)
    select device_class, day, name, route, (select sum(c) from unnest(counts) as c), buckets, counts, min_values, max_values
    from jsonb_to_recordset(${sql.jsonb(histograms as never)}) as g (device_class text, day date, name text, route text,
      buckets integer[], counts bigint[], min_values double precision[], max_values double precision[])
    order by 1, 2, 3, 4
    on conflict (device_class, day, name, route) do update set total = h.total + excluded.total, (buckets, counts, min_values, max_values) =
      (select * from performance_histogram_merge(h.buckets, h.counts, h.min_values, h.max_values,
        excluded.buckets, excluded.counts, excluded.min_values, excluded.max_values))`);
}

/** Recomputes the histograms of the days [from, to) (YYYY-MM-DD) from the raw measures (measures loaded outside the API). */
export async function rebuildHistograms(conn: CommonQueryMethods, from: string, to: string): Promise<void> {
  await conn.query(sql.type(ignoredRow)`select performance_histograms_rebuild(${from}::date, ${to}::date)`);
}

export const percentileRow = z.object({
  day: z.string(),
  name: z.string(),
  route: z.string(),
  count: z.number(),
  percentiles: z.array(z.number()),
});
export type PercentileRow = z.infer<typeof percentileRow>;

export interface PercentileFilters {
  from: Date;
  to: Date;
  name?: string | undefined;
  route?: string | undefined;
  deviceClass?: string | undefined;
}

// The cells travel as comma-separated text: a week of histograms is a few hundred thousand
// numbers, which the generic array parser and a per-element schema check read several times slower.
const numberList = z.string().transform((text) => text.split(",").map(Number));
const histogramRow = z.object({
  day: z.string(),
  name: z.string(),
  route: z.string(),
  count: z.number(),
  counts: numberList,
  min_values: numberList,
  max_values: numberList,
});

/**
 * p50/p75/p95 per UTC day, metric and route over the days of [from, to), busiest groups
 * first within a day, at most `limit` groups, as `percentile_cont` over the measures would
 * give them: PostgreSQL selects the day's histograms (shared/usage/histogram.ts), one row per
 * group, and the percentiles are interpolated from their cells.
 */
export async function percentiles(conn: DatabasePool, filters: PercentileFilters, limit: number): Promise<PercentileRow[]> {
  const where = [
    sql.fragment`device_class = ${filters.deviceClass ?? ALL_DEVICES}`,
    sql.fragment`day >= ${filters.from.toISOString().slice(0, 10)}::date`,
    sql.fragment`day < ${filters.to.toISOString().slice(0, 10)}::date`,
  ];
  if (filters.name) where.push(sql.fragment`name = ${filters.name}`);
  if (filters.route) where.push(sql.fragment`route = ${filters.route}`);
  const rows = await conn.any(sql.type(histogramRow)`
    select to_char(day, 'YYYY-MM-DD') as day, name, route, total::int as count, array_to_string(counts, ',') as counts,
      array_to_string(min_values, ',') as min_values, array_to_string(max_values, ',') as max_values
    from performance_histograms where ${sql.join(where, sql.fragment` and `)}
    order by day desc, count desc, name, route limit ${limit}`);
  return rows.map((r) => ({ day: r.day, name: r.name, route: r.route, count: r.count, percentiles: histogramPercentiles(r.counts, r.min_values, r.max_values, [0.5, 0.75, 0.95]) }));
}
