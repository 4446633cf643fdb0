/**
 * A fingerprint of everything the service stores, to show that a refused request wrote
 * nothing: per table its row count and the newest `xmin` among its rows. A committed insert
 * or update gives its rows the writing transaction's id, so it raises the newest `xmin`; a
 * delete lowers the count; rolled-back work leaves no visible row. Tables whose rows change
 * by design on any request (rate-limit counters and login lockouts, worker heartbeats, the
 * sampled server request timings a web process flushes every few seconds, and the daily
 * histograms it adds them to) are left out, and personal tokens are counted only (authentication records their last use).
 */
import { z } from "zod";
import { sql, type DatabasePool } from "../../../shared/db/pool.ts";

const LEFT_OUT = new Set(["rate_limit_counters", "worker_processes", "schema_migrations", "performance_measures", "performance_histograms"]);
const COUNTED_ONLY = new Set(["personal_access_tokens"]);

/**
 * Returns a function that reads the fingerprint of the database `pool` is connected to: of
 * every table, or of `only` those (one scan per table, so a short list is much cheaper).
 */
export async function fingerprinter(pool: DatabasePool, only?: readonly string[]): Promise<() => Promise<Record<string, string>>> {
  const tables = (await pool.anyFirst(sql.type(z.object({ name: z.string() }))`
    select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and c.relkind in ('r', 'p') order by 1`)).filter((name) => !LEFT_OUT.has(name));
  const unknown = only?.filter((name) => !tables.includes(name)) ?? [];
  if (unknown.length > 0) throw new Error(`fingerprinter: no such table ${unknown.join(", ")}`);
  if (only) tables.splice(0, tables.length, ...only);
  const parts = tables.map((name) =>
    COUNTED_ONLY.has(name)
      ? sql.fragment`select ${name}::text as name, count(*)::text as state from ${sql.identifier([name])}`
      : sql.fragment`select ${name}::text as name, count(*)::text || ':' || coalesce(max(xmin::text::bigint), 0)::text as state from ${sql.identifier([name])}`,
  );
  const query = sql.type(z.object({ name: z.string(), state: z.string() }))`${sql.join(parts, sql.fragment` union all `)}`;
  return async () => Object.fromEntries((await pool.any(query)).map((row) => [row.name, row.state]));
}

/** The tables whose fingerprints differ. */
export function changedTables(before: Record<string, string>, after: Record<string, string>): string[] {
  return Object.keys({ ...before, ...after }).filter((name) => before[name] !== after[name]);
}
