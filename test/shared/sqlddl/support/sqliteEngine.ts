/**
 * SQLite as the judge: DDL runs in an in-memory node:sqlite database, the truth comes from
 * the pragmas (table_info, index_list/index_info, foreign_key_list), and `.schema` output
 * comes from the sqlite3 command-line shell when it is installed (sqlite_schema otherwise).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { promisify } from "node:util";
import type { EngineRules, TruthTable } from "./truth.ts";

const run = promisify(execFile);

type Row = Record<string, unknown>;

const AUTOINCREMENT = /\bPRIMARY\s+KEY\b[^,]*?\bAUTOINCREMENT\b/i;

/** Reads the catalog of every table (sqlite_% internals excluded). */
export function sqliteTruth(db: DatabaseSync): TruthTable[] {
  const tables = db.prepare("select name, sql from sqlite_schema where type = 'table' and name not like 'sqlite_%' order by rowid").all() as { name: string; sql: string }[];
  return tables.map(({ name, sql }) => {
    const q = (pragma: string, arg = name) => db.prepare(`select * from pragma_${pragma}(?)`).all(arg) as Row[];
    const info = q("table_xinfo").filter((c) => Number(c.hidden) !== 1); // generated columns count, hidden ones do not
    const indexes = q("index_list");
    const pk = info.filter((c) => Number(c.pk) > 0).sort((a, b) => Number(a.pk) - Number(b.pk)).map((c) => String(c.name));
    // the rowid alias: a one-column INTEGER key that needs no index of its own
    const rowidAlias = pk.length === 1 && !indexes.some((i) => i.origin === "pk");
    const columns = info.map((c) => {
      const declared = String(c.type);
      const sizes = /\(([^)]*)\)/.exec(declared)?.[1]?.split(",").map((n) => Number(n.trim())) ?? [];
      return {
        name: String(c.name),
        type: declared.replace(/\([^)]*\)/, "").trim().replace(/\s+/g, " ").toLowerCase(),
        length: sizes[0] ?? null,
        scale: sizes[1] ?? null,
        nullable: Number(c.notnull) === 0,
        autoIncrement: rowidAlias && pk[0] === c.name && declared.toUpperCase() === "INTEGER",
        // the keyword (values never reused) is only in the table's SQL; SQLite allows it on the rowid alias alone
        ...(rowidAlias && pk[0] === c.name ? { neverReused: AUTOINCREMENT.test(sql) } : {}),
        // DEFAULT NULL and no default are the same thing
        default: c.dflt_value === null || /^null$/i.test(c.dflt_value as string) ? null : (c.dflt_value as string),
      };
    });
    const uniques = indexes
      .filter((i) => Number(i.unique) === 1 && i.origin !== "pk" && Number(i.partial) === 0)
      .map((i) => q("index_xinfo", String(i.name)).filter((k) => Number(k.key) === 1))
      .filter((keys) => keys.every((k) => Number(k.cid) >= 0))
      .map((keys) => keys.sort((a, b) => Number(a.seqno) - Number(b.seqno)).map((k) => String(k.name)));
    const fks = new Map<number, { columns: string[]; refTable: string; refColumns: (string | null)[]; onDelete: string; onUpdate: string }>();
    for (const f of q("foreign_key_list").sort((a, b) => Number(a.seq) - Number(b.seq))) {
      const fk = fks.get(Number(f.id)) ?? { columns: [], refTable: String(f.table), refColumns: [], onDelete: String(f.on_delete), onUpdate: String(f.on_update) };
      fk.columns.push(String(f.from));
      fk.refColumns.push(f.to === null ? null : (f.to as string));
      fks.set(Number(f.id), fk);
    }
    const foreignKeys = [...fks.values()].map((fk) => ({
      ...fk,
      // REFERENCES t without columns means t's primary key
      refColumns: fk.refColumns.every((c) => c === null) ? referencedKey(db, fk.refTable) : (fk.refColumns as string[]),
    }));
    return { schema: null, name, columns, primaryKey: pk, uniques, foreignKeys };
  });
}

function referencedKey(db: DatabaseSync, table: string): string[] {
  const info = db.prepare("select * from pragma_table_info(?)").all(table) as Row[];
  return info.filter((c) => Number(c.pk) > 0).sort((a, b) => Number(a.pk) - Number(b.pk)).map((c) => String(c.name));
}

/** SQLite keeps declared types verbatim: the parsed name and sizes must be the declared ones. */
export const sqliteRules: EngineRules = {
  typeOf: (f) => (f.computed && !f.field_type ? null : f.field_type),
  sizeOf: (f) => [f.length, f.scale],
  defaultAction: "NO ACTION",
  tableKey: (_schema, name) => name,
};

/** The sqlite3 shell's `.schema` of the database's DDL, or sqlite_schema's text without the shell. */
export async function sqliteDotSchema(sql: string): Promise<{ text: string; source: string }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "sqlddl-"));
  const file = path.join(dir, "db.sqlite");
  try {
    const db = new DatabaseSync(file);
    db.exec(sql);
    const fallback = (db.prepare("select sql from sqlite_schema where sql is not null order by rowid").all() as { sql: string }[]).map((r) => `${r.sql};`).join("\n");
    db.close();
    try {
      const { stdout } = await run("sqlite3", [file, ".schema"]);
      return { text: stdout, source: "sqlite3 .schema" };
    } catch {
      return { text: fallback, source: "sqlite_schema (sqlite3 shell not installed)" };
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
