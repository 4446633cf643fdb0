/**
 * PostgreSQL as the judge: DDL is loaded with psql (the server's own client, so dump
 * scripts run exactly as they would for a user) into a fresh test database whose public
 * schema is emptied first, the truth is read back from pg_catalog/information_schema, and
 * pg_dump gives the server's own dump.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import pg from "pg";
import type { Test } from "tap";
import { withDatabase } from "../../../support/cluster.ts";
import { freshDatabase } from "../../../support/db.ts";
import type { EngineRules, TruthTable } from "./truth.ts";
import type { ParsedField } from "../../../../shared/sqlddl/index.ts";

const run = promisify(execFile);

/** An empty PostgreSQL database for one test, with psql and catalog access. */
export interface PgScratch {
  url: string;
  client: pg.Client;
  /** Runs SQL text through psql (errors do not stop it); returns psql's error lines. */
  load(sql: string): Promise<string[]>;
  /** Runs plain SQL (no psql commands) on the open connection; returns the error, if any. */
  exec(sql: string): Promise<string[]>;
  /** Schemas that existed before anything was loaded (left out of the truth). */
  baseline: Set<string>;
  /** Drops everything loaded so far, so the database can serve the next case. */
  reset(): Promise<void>;
  /** `pg_dump --schema-only` of the database (the pg_dump on PATH must be able to dump this server). */
  dump(): Promise<string>;
}

/** A fresh database (test/support/db.ts) with an empty public schema. */
export async function pgScratch(t: Test): Promise<PgScratch> {
  const db = await freshDatabase(t, { poolSize: 1 });
  return scratchAt(t, db.url);
}

/**
 * An empty database (from template0, so a dump holds only what a test loads) on the server
 * of `adminUrl`, which need not be the test cluster's; dropped at teardown.
 */
export async function pgScratchOn(t: Test, adminUrl: string): Promise<PgScratch> {
  const name = `sqlddl_dump_${randomBytes(5).toString("hex")}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`create database ${name} template template0`);
  t.teardown(() => admin(`drop database if exists ${name} with (force)`));
  return scratchAt(t, withDatabase(adminUrl, name));
}

/** The scratch helpers over the database at `url` (its public schema emptied first). */
async function scratchAt(t: Test, url: string): Promise<PgScratch> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  t.teardown(() => client.end());
  await client.query("drop schema public cascade; create schema public");
  const { rows } = await client.query<{ nspname: string }>("select nspname from pg_namespace where nspname <> 'public'");
  const baseline = new Set(rows.map((r) => r.nspname));
  const load = async (sql: string) => {
    const child = run("psql", ["-X", "-q", "-v", "ON_ERROR_STOP=0", "-d", url, "-f", "-"], { maxBuffer: 64 << 20 });
    child.child.stdin!.end(sql);
    const { stderr } = await child;
    return stderr.split("\n").filter((l) => /ERROR/.test(l));
  };
  const exec = async (sql: string) => {
    try {
      await client.query(sql);
      return [];
    } catch (error) {
      return [`ERROR: ${(error as Error).message}`];
    }
  };
  const reset = async () => {
    const { rows: now } = await client.query<{ nspname: string }>("select nspname from pg_namespace where nspname not like 'pg\\_%'");
    for (const { nspname } of now) if (!baseline.has(nspname)) await client.query(`drop schema ${pg.escapeIdentifier(nspname)} cascade`);
    await client.query("create schema if not exists public; set search_path to public");
  };
  const dump = async () => (await run("pg_dump", ["--schema-only", "-d", url], { maxBuffer: 64 << 20 })).stdout;
  return { url, client, load, exec, baseline, reset, dump };
}

/**
 * A fresh schema of the scratch database made the default (search_path) for what runs next,
 * so that many cases share one database; its truth reports tables without the schema name.
 */
export async function pgNamespace(scratch: PgScratch, name: string): Promise<{ exec(sql: string): Promise<string[]>; truth(): Promise<TruthTable[]> }> {
  await scratch.client.query(`create schema ${pg.escapeIdentifier(name)}`);
  return {
    exec: async (sql) => {
      await scratch.client.query(`set search_path to ${pg.escapeIdentifier(name)}`);
      return scratch.exec(sql);
    },
    truth: async () => (await pgTruth(scratch, [name])).map((table) => ({ ...table, schema: null })),
  };
}

/** The tables of every schema created after the baseline (plus public), or of `only` these. */
export async function pgTruth(scratch: PgScratch, only?: string[]): Promise<TruthTable[]> {
  const { client } = scratch;
  const schemas =
    only ??
    (await client.query<{ nspname: string }>("select nspname from pg_namespace")).rows.map((r) => r.nspname).filter((s) => !scratch.baseline.has(s) && !s.startsWith("pg_"));
  // pg_catalog directly: information_schema.columns is slow, and a test reads it often
  const columns = await client.query(
    `select n.nspname as table_schema, c.relname as table_name, a.attname as column_name,
            not (a.attnotnull or (t.typtype = 'd' and t.typnotnull)) as nullable,
            a.attidentity <> '' as identity, pg_get_expr(d.adbin, d.adrelid) as column_default,
            case when t.typtype = 'd' then t.typbasetype else a.atttypid end as base,
            case when t.typtype = 'd' then t.typtypmod else a.atttypmod end as typmod,
            case when t.typtype = 'e' then 'enum'
                 when t.typtype = 'd' then format_type(t.typbasetype, null)
                 when t.typcategory = 'A' then format_type(t.typelem, null) || '[]'
                 else format_type(a.atttypid, null) end as type
       from pg_attribute a
       join pg_class c on c.oid = a.attrelid and c.relkind in ('r', 'p')
       join pg_namespace n on n.oid = c.relnamespace
       join pg_type t on t.oid = a.atttypid
       left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
      where a.attnum > 0 and not a.attisdropped and n.nspname = any($1)
      order by n.nspname, c.relname, a.attnum`,
    [schemas],
  );
  const tables = new Map<string, TruthTable>();
  const tableOf = (schema: string, name: string) => {
    const key = `${schema}.${name}`;
    let table = tables.get(key);
    if (!table) tables.set(key, (table = { schema, name, columns: [], primaryKey: [], uniques: [], foreignKeys: [] }));
    return table;
  };
  for (const r of columns.rows) {
    const type = String(r.type);
    const mod = Number(r.typmod);
    let length: number | null = null;
    let scale: number | null = null;
    // sizes decoded from the type modifier as information_schema does
    if (["character varying", "character"].includes(type)) length = mod >= 4 ? mod - 4 : null;
    else if (["bit", "bit varying"].includes(type)) length = mod >= 0 ? mod : null;
    else if (type === "numeric" && mod >= 4) {
      length = ((mod - 4) >> 16) & 0xffff;
      scale = (mod - 4) & 0xffff;
    } else if (/^(time|timestamp)/.test(type)) length = mod >= 0 ? mod : 6;
    else if (type === "interval") length = mod >= 0 ? mod & 0xffff : 6;
    tableOf(r.table_schema, r.table_name).columns.push({
      name: r.column_name,
      type,
      length,
      scale,
      nullable: r.nullable,
      autoIncrement: r.identity || /^nextval\(/.test(r.column_default ?? ""),
      // a sequence's name depends on the schema it was made in: only its use matters
      default: r.column_default === null ? null : String(r.column_default).replace(/^nextval\(.*\)$/, "nextval(…)"),
    });
  }
  const keys = await client.query(
    `select con.contype, n.nspname, c.relname,
            array(select a.attname from unnest(con.conkey) with ordinality k(num, ord) join pg_attribute a on a.attrelid = con.conrelid and a.attnum = k.num order by k.ord)::text[] as cols,
            fc.relname as ref_table,
            array(select a.attname from unnest(con.confkey) with ordinality k(num, ord) join pg_attribute a on a.attrelid = con.confrelid and a.attnum = k.num order by k.ord)::text[] as ref_cols,
            con.confdeltype, con.confupdtype
       from pg_constraint con
       join pg_class c on c.oid = con.conrelid
       join pg_namespace n on n.oid = c.relnamespace
       left join pg_class fc on fc.oid = con.confrelid
      where con.contype in ('p', 'u', 'f') and n.nspname = any($1)
        and not (con.contype = 'f' and fc.relispartition and con.conparentid <> 0)
      order by con.conname`,
    [schemas],
  );
  const actions: Record<string, string> = { a: "NO ACTION", r: "RESTRICT", c: "CASCADE", n: "SET NULL", d: "SET DEFAULT" };
  for (const r of keys.rows) {
    const table = tables.get(`${r.nspname}.${r.relname}`);
    if (!table) continue;
    if (r.contype === "p") table.primaryKey = r.cols;
    else if (r.contype === "u") table.uniques.push(r.cols);
    else table.foreignKeys.push({ columns: r.cols, refTable: r.ref_table, refColumns: r.ref_cols, onDelete: actions[r.confdeltype]!, onUpdate: actions[r.confupdtype]! });
  }
  const indexes = await client.query(
    `select n.nspname, c.relname,
            array(select a.attname from unnest(i.indkey::int2[]) with ordinality k(num, ord) join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.num order by k.ord)::text[] as cols
       from pg_index i
       join pg_class c on c.oid = i.indrelid
       join pg_namespace n on n.oid = c.relnamespace
      where i.indisunique and not i.indisprimary and i.indpred is null and i.indexprs is null and n.nspname = any($1)
        and not exists (select 1 from pg_constraint con where con.conindid = i.indexrelid and con.contype in ('u', 'p'))`,
    [schemas],
  );
  for (const r of indexes.rows) tables.get(`${r.nspname}.${r.relname}`)?.uniques.push(r.cols);
  return [...tables.values()];
}

/** The engine's spelling of each parsed type, asked of the server itself (to_regtype). */
export async function pgRules(client: pg.Client, fields: ParsedField[]): Promise<EngineRules> {
  const written = [...new Set(fields.map((f) => f.field_type).filter((t) => t && t !== "enum"))];
  const { rows } = await client.query<{ t: string; name: string | null }>("select t, format_type(to_regtype(t), null) as name from unnest($1::text[]) t", [written]);
  const canonical = new Map(rows.map((r) => [r.t, r.name ?? r.t]));
  const name = (f: ParsedField) => (f.field_type === "enum" ? "enum" : (canonical.get(f.field_type) ?? f.field_type));
  return {
    typeOf: (f) => (f.computed && !f.field_type ? null : `${name(f)}${f.array_dimensions ? "[]" : ""}`),
    sizeOf: (f) => {
      const type = name(f);
      if (f.array_dimensions) return null;
      if (type === "character" || type === "bit") return [f.length ?? 1, null];
      if (type === "character varying" || type === "bit varying") return [f.length, null];
      if (type === "numeric") return [f.length, f.scale];
      if (/^(time|timestamp|interval)/.test(type)) return [f.length ?? 6, null]; // PostgreSQL default precision
      return null;
    },
    defaultAction: "NO ACTION",
    tableKey: (schema, table) => `${schema ?? "public"}.${table}`,
  };
}
