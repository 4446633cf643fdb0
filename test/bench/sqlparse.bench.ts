/**
 * Schema parsing: throughput (MB/s) and peak memory on a generated 300-table pg_dump
 * --schema-only output and a 300-table mariadb-dump --no-data output, against
 * node-sql-parser on the same files (statement by statement, since it stops at the first
 * statement it cannot read) and libpg-query (PostgreSQL's own parser) on the PostgreSQL
 * file, in the same run. Each parser runs in its own child process, so the peak RSS it
 * reports is its own; for throughput they take turns in one process, so that load on a
 * shared machine hits them alike. Also counted: statements and tables each one understands.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { limitFigure, ratioFigure, report, type Figure } from "./report.ts";

const TABLES = 300;
const TYPES_PG = ["integer", "bigint", "smallint", "text", "character varying(120)", "numeric(12,2)", "boolean", "timestamp with time zone", "date", "uuid", "jsonb", "character(3)", "double precision"];
const TYPES_MY = ["int(11)", "bigint(20) unsigned", "smallint(6)", "text", "varchar(120)", "decimal(12,2)", "tinyint(1)", "datetime", "date", "char(36)", "longtext", "char(3)", "double"];

/** A pg_dump --schema-only style dump: SET lines, sequences, OWNER TO, ALTER TABLE ONLY keys, indexes, comments. */
function pgDump(): string {
  const out = ["--\n-- PostgreSQL database dump\n--\n", "SET statement_timeout = 0;\nSET client_encoding = 'UTF8';\nSET standard_conforming_strings = on;", "SELECT pg_catalog.set_config('search_path', '', false);", "SET default_tablespace = '';\n"];
  const post: string[] = [];
  for (let i = 0; i < TABLES; i++) {
    const name = `table_${i}`;
    out.push(`--\n-- Name: ${name}_id_seq; Type: SEQUENCE; Schema: public; Owner: app\n--\n\nCREATE SEQUENCE public.${name}_id_seq\n    START WITH 1\n    INCREMENT BY 1\n    NO MINVALUE\n    NO MAXVALUE\n    CACHE 1;\n\nALTER TABLE public.${name}_id_seq OWNER TO app;\n`);
    const cols = [`    id integer DEFAULT nextval('public.${name}_id_seq'::regclass) NOT NULL`];
    if (i > 0) cols.push(`    parent_id integer`);
    for (let c = 0; c < 10 + (i % 6); c++) {
      const type = TYPES_PG[(i + c) % TYPES_PG.length]!;
      const def = c % 4 !== 1 ? "" : /char|text/.test(type) ? " DEFAULT ''::text" : /int|numeric|double/.test(type) ? " DEFAULT 0" : type === "boolean" ? " DEFAULT false" : "";
      cols.push(`    col_${c} ${type}${def}${c % 3 === 0 ? " NOT NULL" : ""}`);
    }
    cols.push("    created_at timestamp with time zone DEFAULT now() NOT NULL");
    out.push(`--\n-- Name: ${name}; Type: TABLE; Schema: public; Owner: app\n--\n\nCREATE TABLE public.${name} (\n${cols.join(",\n")}\n);\n\nALTER TABLE public.${name} OWNER TO app;\n`);
    out.push(`COMMENT ON TABLE public.${name} IS 'Generated table number ${i}';\n`);
    post.push(`ALTER TABLE ONLY public.${name}\n    ADD CONSTRAINT ${name}_pkey PRIMARY KEY (id);\n`);
    post.push(`CREATE INDEX ${name}_created_idx ON public.${name} USING btree (created_at);\n`);
    if (i > 0) post.push(`ALTER TABLE ONLY public.${name}\n    ADD CONSTRAINT ${name}_parent_fkey FOREIGN KEY (parent_id) REFERENCES public.table_${i - 1}(id) ON DELETE CASCADE;\n`);
    if (i % 25 === 0) out.push(`CREATE VIEW public.view_${i} AS\n SELECT ${name}.id, ${name}.created_at\n   FROM public.${name};\n\nALTER TABLE public.view_${i} OWNER TO app;\n`);
  }
  return `${[...out, ...post].join("\n")}\n--\n-- PostgreSQL database dump complete\n--\n`;
}

/** A mariadb-dump --no-data style dump: conditional comments, backticks, inline keys, ENGINE options. */
function mariadbDump(): string {
  const out = ["-- MariaDB dump 10.19  Distrib 10.11.6-MariaDB\n", "/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;\n/*!40101 SET NAMES utf8mb4 */;\n/*!40014 SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0 */;\n"];
  for (let i = 0; i < TABLES; i++) {
    const name = `table_${i}`;
    const cols = ["  `id` int(11) NOT NULL AUTO_INCREMENT"];
    if (i > 0) cols.push("  `parent_id` int(11) DEFAULT NULL");
    for (let c = 0; c < 10 + (i % 6); c++) cols.push(`  \`col_${c}\` ${TYPES_MY[(i + c) % TYPES_MY.length]}${c % 3 === 0 ? " NOT NULL" : " DEFAULT NULL"}`);
    cols.push("  `created_at` timestamp NOT NULL DEFAULT current_timestamp()", "  PRIMARY KEY (`id`)", "  KEY `created_idx` (`created_at`)");
    if (i > 0) cols.push("  KEY `parent_idx` (`parent_id`)", `  CONSTRAINT \`${name}_parent_fk\` FOREIGN KEY (\`parent_id\`) REFERENCES \`table_${i - 1}\` (\`id\`) ON DELETE CASCADE`);
    out.push(
      `--\n-- Table structure for table \`${name}\`\n--\n\nDROP TABLE IF EXISTS \`${name}\`;\n/*!40101 SET @saved_cs_client     = @@character_set_client */;\n/*!40101 SET character_set_client = utf8mb4 */;\nCREATE TABLE \`${name}\` (\n${cols.join(",\n")}\n) ENGINE=InnoDB AUTO_INCREMENT=${i + 1} DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci COMMENT='Generated table ${i}';\n/*!40101 SET character_set_client = @saved_cs_client */;\n`,
    );
  }
  out.push("/*!40014 SET FOREIGN_KEY_CHECKS=@OLD_FOREIGN_KEY_CHECKS */;\n-- Dump completed\n");
  return out.join("\n");
}

/** What one parser did with one file, measured in a child process. */
interface Measure {
  mbPerSec: number;
  peakMb: number;
  /** RSS after loading the parser and the file, before parsing. */
  baseMb: number;
  statements: number;
  understood: number;
  tables: number;
}

const self = fileURLToPath(import.meta.url);

const NODE_SQL_PARSER_DB: Record<string, string> = { PostgreSQL: "PostgresQL", MySQL: "MariaDB", SQLite: "Sqlite", MSSQL: "TransactSQL" };

/** Statements for a parser that takes one at a time: split at `;` line ends and T-SQL GO lines. */
const pieces = (text: string) => text.split(/;[ \t]*\r?\n|\r?\n[ \t]*GO[ \t]*\r?\n/i).filter((s) => s.replace(/--[^\n]*\n?/g, "").replace(/\/\*[\s\S]*?\*\//g, "").trim());

/** A function that parses the text and counts what it understood. */
async function runner(parser: string, dialect: string): Promise<(text: string) => Omit<Measure, "mbPerSec" | "peakMb" | "baseMb">> {
  if (parser === "ours") {
    // the parser's own module: the engine's index also loads export, compare and the zod
    // schemas of the stored model (~16 MB of RSS), which parsing does not use
    const { parseDdl } = await import("../../shared/sqlddl/parser.ts");
    return (text) => {
      const r = parseDdl(text, dialect as "MySQL");
      return { statements: r.statements.understood + r.statements.skipped, understood: r.statements.understood, tables: r.schema.tables.length };
    };
  }
  if (parser === "node-sql-parser") {
    const { Parser } = (await import("node-sql-parser")).default;
    const p = new Parser();
    const database = NODE_SQL_PARSER_DB[dialect];
    return (text) => {
      // it stops at the first statement it cannot read, so it gets them one at a time
      const all = pieces(text);
      let understood = 0;
      let tables = 0;
      for (const piece of database ? all : []) {
        try {
          const ast = p.astify(piece, { database });
          understood++;
          for (const node of Array.isArray(ast) ? ast : [ast]) if (node.type === "create" && (node as { keyword?: string }).keyword === "table") tables++;
        } catch {
          continue;
        }
      }
      return { statements: all.length, understood, tables };
    };
  }
  const lib = await import("libpg-query");
  await lib.loadModule();
  const count = (sql: string) => {
    const stmts = lib.parseSync(sql).stmts ?? [];
    return { understood: stmts.length, tables: stmts.filter((x) => x.stmt && "CreateStmt" in x.stmt).length };
  };
  return (text) => {
    try {
      return { statements: count(text).understood, ...count(text) };
    } catch {
      // a file with psql commands in it: statement by statement
      const all = pieces(text);
      const sum = { statements: all.length, understood: 0, tables: 0 };
      for (const piece of all) {
        try {
          const r = count(piece);
          sum.understood += r.understood;
          sum.tables += r.tables;
        } catch {
          continue;
        }
      }
      return sum;
    }
  };
}

/** Children share the test runner's compile cache (the service's processes use one too). */
const childEnv = { ...process.env, NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE ?? path.join(os.tmpdir(), "node-compile-cache") };

function spawnSelf(args: string[]): string {
  const child = spawnSync(process.execPath, ["--expose-gc", self, ...args], { encoding: "utf8", maxBuffer: 1 << 20, env: childEnv });
  if (child.status !== 0) throw new Error(`${args.join(" ")} failed: ${child.stderr}`);
  return child.stdout;
}

/** Counts and peak memory of one parser on one file (its own process). */
function measure(parser: string, file: string, dialect: string): Measure {
  return JSON.parse(spawnSelf(["--child", parser, file, dialect])) as Measure;
}

/** Throughput (MB/s) of several parsers taking turns on one file. */
function throughput(file: string, dialect: string, parsers: string[]): Record<string, number> {
  return JSON.parse(spawnSelf(["--race", file, dialect, ...parsers])) as Record<string, number>;
}

/** Tables each parser finds in the shared corpus (real sample-database DDL), per dialect. */
function corpusFigures(): Figure[] {
  const corpus = path.resolve(path.dirname(self), "../../../shared/corpus");
  if (!existsSync(corpus)) {
    process.stderr.write("SQL corpus not found beside the repository: corpus figures skipped\n");
    return [];
  }
  const figures: Figure[] = [];
  for (const [folder, dialect] of Object.entries({ postgresql: "PostgreSQL", mysql: "MySQL", sqlite: "SQLite", mssql: "MSSQL", firebird: "Firebird" })) {
    const files = readdirSync(path.join(corpus, folder)).filter((f) => f.endsWith(".sql")).map((f) => path.join(corpus, folder, f));
    const total = (parser: string) => files.map((f) => measure(parser, f, dialect)).reduce((a, m) => ({ tables: a.tables + m.tables, understood: a.understood + m.understood, statements: a.statements + m.statements }), { tables: 0, understood: 0, statements: 0 });
    const ours = total("ours");
    const nsp = total("node-sql-parser");
    const libpg = dialect === "PostgreSQL" ? total("libpg-query") : null;
    const note = `${files.length} files; node-sql-parser ${nsp.understood}/${nsp.statements} statements${libpg ? `; libpg-query ${libpg.tables} tables, ${libpg.understood}/${libpg.statements} statements` : ""}`;
    if (NODE_SQL_PARSER_DB[dialect]) figures.push(ratioFigure(`sqlparse.corpus.${folder}.tables_vs_node_sql_parser`, ours.tables, nsp.tables, "tables", 1, note));
    else figures.push({ name: `sqlparse.corpus.${folder}.tables`, value: ours.tables, unit: "tables", baseline: null, ratio: null, target: "no baseline", met: true, note: `${files.length} files; node-sql-parser has no ${dialect} mode` });
  }
  return figures;
}

/** Child process: parse one file once with one parser; print what it understood and its peak RSS. */
async function child(): Promise<void> {
  const [, , , parser, file, dialect] = process.argv;
  const text = readFileSync(file!, "utf8");
  const run = await runner(parser!, dialect!);
  const baseMb = process.memoryUsage().rss / 1048576;
  const result = run(text);
  const peakMb = process.resourceUsage().maxRSS / 1024;
  process.stdout.write(JSON.stringify({ ...result, mbPerSec: 0, peakMb, baseMb } satisfies Measure));
}

/**
 * Child process: the parsers take turns on the same file, round after round, and each one's
 * median time counts. Load on a shared machine then hits them alike, which separate
 * processes measured one after the other would not guarantee.
 */
async function race(): Promise<void> {
  const [, , , file, dialect, ...parsers] = process.argv;
  const text = readFileSync(file!, "utf8");
  const runs = await Promise.all(parsers.map((p) => runner(p, dialect!)));
  for (const run of runs) for (let i = 0; i < 2; i++) run(text);
  const times: number[][] = parsers.map(() => []);
  const started = performance.now();
  for (let round = 0; round < 7 || performance.now() - started < 8000; round++) {
    for (let k = 0; k < runs.length; k++) {
      const i = (k + round) % runs.length;
      const t0 = performance.now();
      runs[i]!(text);
      times[i]!.push(performance.now() - t0);
    }
  }
  const median = (list: number[]) => [...list].sort((x, y) => x - y)[Math.floor(list.length / 2)]!;
  process.stdout.write(JSON.stringify(Object.fromEntries(parsers.map((p, i) => [p, Buffer.byteLength(text) / 1e6 / (median(times[i]!) / 1000)]))));
}


/** Peak RSS of the whole process and of the parse alone, each against ≤ 0.5× node-sql-parser's. */
function memoryFigures(dump: string, ours: Measure, nsp: Measure, extra = ""): Figure[] {
  const half = (mb: number) => Math.round(mb / 2);
  const parse = (m: Measure) => Math.max(0, m.peakMb - m.baseMb);
  return [
    limitFigure(`sqlparse.${dump}.peak_rss`, ours.peakMb, "MB", half(nsp.peakMb), nsp.peakMb, `0.5x node-sql-parser's peak; before parsing ${Math.round(ours.baseMb)} MB (node-sql-parser ${Math.round(nsp.baseMb)})${extra}`),
    limitFigure(`sqlparse.${dump}.parse_rss`, parse(ours), "MB", half(parse(nsp)), parse(nsp), "peak RSS less the RSS with parser and text loaded; 0.5x node-sql-parser's"),
  ];
}

/** Parent process: write the dumps, measure every parser in a child, report. */
function main(): void {
  const dir = mkdtempSync(path.join(os.tmpdir(), "sqlparse-bench-"));
  try {
    const pgFile = path.join(dir, "pg_dump.sql");
    const myFile = path.join(dir, "mariadb_dump.sql");
    writeFileSync(pgFile, pgDump());
    writeFileSync(myFile, mariadbDump());
    const size = (f: string) => `${(readFileSync(f).length / 1e6).toFixed(2)} MB`;
    const pgSpeed = throughput(pgFile, "PostgreSQL", ["ours", "node-sql-parser", "libpg-query"]);
    const mySpeed = throughput(myFile, "MySQL", ["ours", "node-sql-parser"]);
    const withSpeed = (m: Measure, speed: number | undefined) => ({ ...m, mbPerSec: speed ?? 0 });
    const pg = {
      ours: withSpeed(measure("ours", pgFile, "PostgreSQL"), pgSpeed.ours),
      nsp: withSpeed(measure("node-sql-parser", pgFile, "PostgreSQL"), pgSpeed["node-sql-parser"]),
      libpg: withSpeed(measure("libpg-query", pgFile, "PostgreSQL"), pgSpeed["libpg-query"]),
    };
    const my = { ours: withSpeed(measure("ours", myFile, "MySQL"), mySpeed.ours), nsp: withSpeed(measure("node-sql-parser", myFile, "MySQL"), mySpeed["node-sql-parser"]) };
    const counted = (m: Measure) => `${m.understood}/${m.statements} statements, ${m.tables} tables`;
    const figures: Figure[] = [
      ratioFigure("sqlparse.pg_dump.throughput_vs_node_sql_parser", pg.ours.mbPerSec, pg.nsp.mbPerSec, "MB/s", 5, `${size(pgFile)}; node-sql-parser: ${counted(pg.nsp)}`),
      ratioFigure("sqlparse.pg_dump.throughput_vs_libpg_query", pg.ours.mbPerSec, pg.libpg.mbPerSec, "MB/s", 1, `libpg-query: ${counted(pg.libpg)}`),
      ratioFigure("sqlparse.pg_dump.tables_understood", pg.ours.tables, TABLES, "tables", 1, `ours: ${counted(pg.ours)}`),
      ...memoryFigures("pg_dump", pg.ours, pg.nsp, `; libpg-query peak ${Math.round(pg.libpg.peakMb)} MB`),
      ratioFigure("sqlparse.mariadb_dump.throughput_vs_node_sql_parser", my.ours.mbPerSec, my.nsp.mbPerSec, "MB/s", 5, `${size(myFile)}; node-sql-parser: ${counted(my.nsp)}`),
      ratioFigure("sqlparse.mariadb_dump.tables_understood", my.ours.tables, TABLES, "tables", 1, `ours: ${counted(my.ours)}`),
      ...memoryFigures("mariadb_dump", my.ours, my.nsp),
    ];
    figures.push(...corpusFigures());
    report(`Schema parsing (${TABLES}-table dumps; own parser vs node-sql-parser and libpg-query)`, figures);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === "--child") await child();
else if (process.argv[2] === "--race") await race();
else main();
