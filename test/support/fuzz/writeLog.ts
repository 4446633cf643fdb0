/**
 * A log of every row the service writes, to show that a refused request wrote nothing in one
 * cheap read instead of a scan of every table: a row trigger on each table appends the
 * table's name to `fuzz_audit.writes` inside the writing transaction, so a committed insert,
 * update or delete leaves an entry and rolled-back work leaves none. A mark is the newest
 * entry's id; what was written since a mark is one index range read.
 *
 * Left out, as by the table fingerprint (`fingerprint.ts`): tables whose rows change by design
 * on any request (rate-limit counters and login lockouts, worker heartbeats, the sampled
 * server request timings and their daily histograms), and the addresses a right password came
 * from (`login_sources`: recorded by the password check, as a wrong one is counted, also when
 * the request it re-checked is refused after it); personal tokens log inserts and deletes
 * only (authentication records their last use), as do two-factor login challenges (a wrong
 * code is counted on the challenge, refused and kept, so that guessing ends after five). The log lives in a schema of its own, so the
 * service's tables are the same as without it.
 */
import { z } from "zod";
import { sql, type DatabasePool } from "../../../shared/db/pool.ts";

const LEFT_OUT = new Set(["rate_limit_counters", "login_sources", "worker_processes", "schema_migrations", "performance_measures", "performance_histograms"]);
const INSERTS_AND_DELETES_ONLY = new Set(["personal_access_tokens", "two_factor_challenges"]);

/** What was written since a mark, and the mark after it. */
export interface Writes {
  mark: number;
  tables: string[];
}

/** Installs the log in the database of `pool` (once per database) and returns its reader. */
export async function writeLog(pool: DatabasePool): Promise<{ mark: () => Promise<number>; since: (mark: number) => Promise<Writes> }> {
  const tables = (await pool.anyFirst(sql.type(z.object({ name: z.string() }))`
    select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and c.relkind in ('r', 'p') and not c.relispartition order by 1`)).filter((name) => !LEFT_OUT.has(name));
  await pool.transaction(async (tx) => {
    await tx.query(sql.type(z.object({}))`create schema if not exists fuzz_audit`);
    await tx.query(sql.type(z.object({}))`create table if not exists fuzz_audit.writes (id bigserial primary key, table_name text not null)`);
    await tx.query(sql.type(z.object({}))`
      create or replace function fuzz_audit.record() returns trigger language plpgsql as $$
      begin
        insert into fuzz_audit.writes (table_name) values (tg_table_name);
        return null;
      end $$`);
    for (const name of tables) {
      const events = INSERTS_AND_DELETES_ONLY.has(name) ? sql.fragment`insert or delete` : sql.fragment`insert or update or delete`;
      await tx.query(sql.type(z.object({}))`drop trigger if exists fuzz_audit_write on ${sql.identifier([name])}`);
      await tx.query(sql.type(z.object({}))`
        create trigger fuzz_audit_write after ${events} on ${sql.identifier([name])} for each row execute function fuzz_audit.record()`);
    }
  });
  const mark = () => pool.oneFirst(sql.type(z.object({ mark: z.coerce.number() }))`select coalesce(max(id), 0) as mark from fuzz_audit.writes`);
  const since = async (from: number): Promise<Writes> => {
    const row = await pool.one(sql.type(z.object({ mark: z.coerce.number(), tables: z.array(z.string()) }))`
      select coalesce(max(id), ${from}) as mark, coalesce(array_agg(distinct table_name order by table_name) filter (where table_name is not null), '{}') as tables
      from fuzz_audit.writes where id > ${from}`);
    return { mark: row.mark, tables: row.tables };
  };
  return { mark, since };
}
