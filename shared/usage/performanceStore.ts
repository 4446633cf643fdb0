/**
 * SQL of performance measures: batches in with one multi-row insert, percentiles out
 * (p50, p75, p95 per day, metric and route, computed by PostgreSQL in one pass per group).
 */
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods, type DatabasePool } from "../db/pool.ts";

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

/** p50/p75/p95 per UTC day, metric and route over [from, to), busiest groups first within a day, at most `limit` groups. */
export async function percentiles(conn: DatabasePool, filters: PercentileFilters, limit: number): Promise<PercentileRow[]> {
  const where = [sql.fragment`recorded_at >= ${filters.from.toISOString()}::timestamptz`, sql.fragment`recorded_at < ${filters.to.toISOString()}::timestamptz`];
  if (filters.name) where.push(sql.fragment`name = ${filters.name}`);
  if (filters.route) where.push(sql.fragment`route = ${filters.route}`);
  if (filters.deviceClass) where.push(sql.fragment`device_class = ${filters.deviceClass}`);
  // The percentiles sort every value of a group: with the default work_mem a large range
  // spills to disk, so this one query gets room for an in-memory sort.
  const rows = await conn.transaction(async (tx) => {
    await tx.query(sql.type(ignoredRow)`set local work_mem = '128MB'`);
    return tx.any(sql.type(percentileRow)`
    select to_char((recorded_at at time zone 'UTC')::date, 'YYYY-MM-DD') as day, name, route, count(*)::int as count,
      percentile_cont(array[0.5, 0.75, 0.95]) within group (order by value) as percentiles
    from performance_measures where ${sql.join(where, sql.fragment` and `)}
    group by 1, 2, 3 order by 1 desc, 4 desc, 2, 3 limit ${limit}`);
  });
  return [...rows];
}
