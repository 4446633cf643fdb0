/**
 * MariaDB/MySQL as the judge, when one listens on 127.0.0.1:3306 (root, no password):
 * DDL is loaded with the `mariadb`/`mysql` client (which understands DELIMITER) into a
 * database of our own, the truth is read from information_schema, and `mariadb-dump
 * --no-data` gives the server's own dump. Tests skip with a message when there is none.
 */
import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import mysql from "mysql2/promise";
import type { Test } from "tap";
import { engineSkip } from "../../../support/engines.ts";
import type { EngineRules, TruthTable } from "./truth.ts";
import type { ParsedField } from "../../../../shared/sqlddl/index.ts";

const run = promisify(execFile);
const HOST = "127.0.0.1";
/** MariaDB spells some types differently from MySQL (JSON is LONGTEXT there). */
let mariadb = false;

/** A connection to the local server, or the reason there is none. */
export async function mysqlAvailable(): Promise<string | null> {
  try {
    const conn = await mysql.createConnection({ host: HOST, user: "root", connectTimeout: 2000 });
    const [rows] = await conn.query("select version() as v");
    mariadb = /mariadb/i.test(String((rows as { v: string }[])[0]?.v));
    await conn.end();
  } catch (error) {
    return engineSkip(`no MySQL/MariaDB server at ${HOST}:3306 for root without password (${(error as Error).message}); MySQL tests skipped`);
  }
  return (await clientBinary()) ? null : engineSkip("no mariadb/mysql command-line client on PATH; MySQL tests skipped");
}

async function clientBinary(): Promise<string | null> {
  for (const bin of ["mariadb", "mysql"]) {
    try {
      await run(bin, ["--version"]);
      return bin;
    } catch {
      continue;
    }
  }
  return null;
}

/** A database of our own for one test, dropped at teardown. */
export interface MysqlScratch {
  name: string;
  conn: mysql.Connection;
  /** Runs SQL text through the command-line client (--force: errors do not stop it); returns its error lines. */
  load(sql: string): Promise<string[]>;
  /** `mariadb-dump --no-data` of the database. */
  dump(): Promise<string>;
  /** Runs plain SQL (no client commands) in the database over the connection; returns the error, if any. */
  exec(sql: string): Promise<string[]>;
}

export async function mysqlScratch(t: Test): Promise<MysqlScratch> {
  const name = `sqlddl_${randomBytes(5).toString("hex")}`;
  const conn = await mysql.createConnection({ host: HOST, user: "root", multipleStatements: true });
  await conn.query(`create database \`${name}\``);
  t.teardown(async () => {
    await conn.query(`drop database if exists \`${name}\``);
    await conn.end();
  });
  const bin = (await clientBinary())!;
  const load = (sql: string) =>
    new Promise<string[]>((resolve, reject) => {
      const child = spawn(bin, ["-h", HOST, "-u", "root", "--force", "--default-character-set=utf8mb4", name]);
      let stderr = "";
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      child.on("error", reject);
      child.on("close", () => resolve(stderr.split("\n").filter((l) => /ERROR/.test(l))));
      child.stdin.end(sql);
    });
  const dump = async () => {
    const tool = bin === "mariadb" ? "mariadb-dump" : "mysqldump";
    return (await run(tool, ["-h", HOST, "-u", "root", "--no-data", "--skip-triggers", name], { maxBuffer: 64 << 20 })).stdout;
  };
  const exec = async (sql: string) => {
    try {
      await conn.query(`use \`${name}\``);
      await conn.query(sql);
      return [];
    } catch (error) {
      return [`ERROR: ${(error as Error).message}`];
    }
  };
  return { name, conn, load, dump, exec };
}

/** Corpus scripts create and USE their own database: point that name at ours. */
export function intoDatabase(sql: string, database: string): string {
  const used = /^\s*use\s+`?([\w$]+)`?\s*;/im.exec(sql)?.[1];
  if (!used) return sql;
  return sql.replace(new RegExp(`\`${used}\`|\\b${used}\\b(?![(\`])`, "g"), `\`${database}\``);
}

type Row = Record<string, any>;

export async function mysqlTruth(scratch: MysqlScratch): Promise<TruthTable[]> {
  const q = async (sql: string) => (await scratch.conn.query(sql, [scratch.name]))[0] as Row[];
  const tables = new Map<string, TruthTable>();
  for (const r of await q("select TABLE_NAME from information_schema.TABLES where TABLE_SCHEMA = ? and TABLE_TYPE = 'BASE TABLE' order by TABLE_NAME")) {
    tables.set(r.TABLE_NAME, { schema: null, name: r.TABLE_NAME, columns: [], primaryKey: [], uniques: [], foreignKeys: [] });
  }
  const columns = await q("select * from information_schema.COLUMNS where TABLE_SCHEMA = ? order by TABLE_NAME, ORDINAL_POSITION");
  for (const r of columns) {
    const type = String(r.DATA_TYPE);
    const char = ["char", "varchar", "binary", "varbinary"].includes(type);
    const numeric = type === "decimal";
    tables.get(r.TABLE_NAME)?.columns.push({
      name: r.COLUMN_NAME,
      type,
      length: char ? Number(r.CHARACTER_MAXIMUM_LENGTH) : numeric ? Number(r.NUMERIC_PRECISION) : null,
      scale: numeric ? Number(r.NUMERIC_SCALE) : null,
      nullable: r.IS_NULLABLE === "YES",
      autoIncrement: /auto_increment/i.test(r.EXTRA),
      // MariaDB prints an explicit DEFAULT NULL as 'NULL'; it is the same as no default
      default: r.COLUMN_DEFAULT === null || /^null$/i.test(String(r.COLUMN_DEFAULT)) ? null : String(r.COLUMN_DEFAULT),
    });
  }
  const stats = await q("select * from information_schema.STATISTICS where TABLE_SCHEMA = ? order by TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX");
  const keys = new Map<string, { table: string; name: string; unique: boolean; columns: string[] }>();
  for (const r of stats) {
    const key = `${r.TABLE_NAME}.${r.INDEX_NAME}`;
    const entry = keys.get(key) ?? { table: String(r.TABLE_NAME), name: String(r.INDEX_NAME), unique: Number(r.NON_UNIQUE) === 0, columns: [] as string[] };
    entry.columns.push(String(r.COLUMN_NAME));
    keys.set(key, entry);
  }
  for (const k of keys.values()) {
    const table = tables.get(k.table);
    if (!table || !k.unique) continue;
    if (k.name === "PRIMARY") table.primaryKey = k.columns;
    else table.uniques.push(k.columns);
  }
  const rules = await q("select * from information_schema.REFERENTIAL_CONSTRAINTS where CONSTRAINT_SCHEMA = ?");
  const usage = await q("select * from information_schema.KEY_COLUMN_USAGE where TABLE_SCHEMA = ? and REFERENCED_TABLE_NAME is not null order by TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION");
  for (const rule of rules) {
    const parts = usage.filter((u) => u.CONSTRAINT_NAME === rule.CONSTRAINT_NAME && u.TABLE_NAME === rule.TABLE_NAME);
    tables.get(rule.TABLE_NAME)?.foreignKeys.push({
      columns: parts.map((u) => u.COLUMN_NAME),
      refTable: rule.REFERENCED_TABLE_NAME,
      refColumns: parts.map((u) => u.REFERENCED_COLUMN_NAME),
      onDelete: rule.DELETE_RULE,
      onUpdate: rule.UPDATE_RULE,
    });
  }
  return [...tables.values()];
}

/** MySQL's documented type synonyms: what information_schema.DATA_TYPE calls each spelling. */
const SYNONYMS: Record<string, string> = {
  integer: "int", int4: "int", int1: "tinyint", int2: "smallint", int3: "mediumint", middleint: "mediumint", int8: "bigint",
  bool: "tinyint", boolean: "tinyint", dec: "decimal", numeric: "decimal", fixed: "decimal", real: "double",
  "double precision": "double", float4: "float", float8: "double", nvarchar: "varchar", "national varchar": "varchar",
  "character varying": "varchar", "national character varying": "varchar", "national char varying": "varchar",
  "char varying": "varchar", nchar: "char", "national char": "char", "national character": "char", character: "char",
  "long varchar": "mediumtext", long: "mediumtext", "long varbinary": "mediumblob",
};

export const mysqlRules: EngineRules = {
  typeOf: (f: ParsedField) => {
    if (f.computed && !f.field_type) return null;
    if (f.field_type === "json" && mariadb) return "longtext";
    return SYNONYMS[f.field_type] ?? f.field_type;
  },
  sizeOf: (f: ParsedField) => {
    const type = SYNONYMS[f.field_type] ?? f.field_type;
    if (type === "char" || type === "binary") return [f.length ?? 1, null];
    if (type === "varchar" || type === "varbinary") return [f.length, null];
    if (type === "decimal") return [f.length ?? 10, f.scale ?? 0];
    return null;
  },
  // MariaDB reports an undeclared action as RESTRICT, which is also what it does
  defaultAction: "RESTRICT",
  tableKey: (_schema, name) => name,
};
