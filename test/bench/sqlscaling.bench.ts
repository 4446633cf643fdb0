/**
 * How the SQL engine's cost grows with the input: a CREATE TABLE of 30,000 columns, a dump
 * of 3,000 tables and a T-SQL batch of 5,000 statements, each 100 times a small case parsed,
 * exported and compared in the same run. Linear code measures 75–320 times (the large case
 * pays for garbage collection of a bigger heap); a lookup by name that scans a list inside a
 * loop made it 2,300–14,000 times, so the target is under 1,000 times. Each side is the best
 * of a few runs after a warm-up; the small case is timed over batches of 100 calls.
 */
import { diffSchemas, exportSql, parseDdl, type Dialect, type ParsedSchema } from "../../shared/sqlddl/index.ts";
import { manyTables, tsqlBatch, wideTable } from "../support/ddlShapes.ts";
import { limitFigure, report, type Figure } from "./report.ts";

const GROWTH = 100;
const BOUND = 1000;
const parse = (sql: string, dialect: Dialect): ParsedSchema => parseDdl(sql, dialect, { maxMs: 120_000 }).schema;

function best(fn: () => unknown, runs: number): number {
  fn();
  let min = Infinity;
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    fn();
    min = Math.min(min, performance.now() - started);
  }
  return min;
}

const figures: Figure[] = [];
function growth(name: string, small: () => unknown, large: () => unknown): void {
  const smallMs = best(() => {
    for (let k = 0; k < GROWTH; k++) small();
  }, 3) / GROWTH;
  const largeMs = best(large, 3);
  figures.push(limitFigure(`sqlscaling.${name}`, largeMs / smallMs, "x", BOUND, null, `${GROWTH}x the input: ${smallMs.toFixed(2)} ms -> ${largeMs.toFixed(0)} ms`));
}

for (const dialect of ["PostgreSQL", "MySQL"] as const) {
  const small = parse(wideTable(300, dialect), dialect);
  const large = parse(wideTable(300 * GROWTH, dialect), dialect);
  growth(`wide.${dialect}.parse`, () => parse(wideTable(300, dialect), dialect), () => parse(wideTable(300 * GROWTH, dialect), dialect));
  for (const target of ["PostgreSQL", "MySQL", "SQLite", "MSSQL"] as const) {
    growth(`wide.${dialect}.export.${target}`, () => exportSql(small, target), () => exportSql(large, target));
  }
  const smallChanged = parse(wideTable(300, dialect, 3), dialect);
  const largeChanged = parse(wideTable(300 * GROWTH, dialect, 3), dialect);
  growth(`wide.${dialect}.compare`, () => diffSchemas(small, smallChanged, dialect), () => diffSchemas(large, largeChanged, dialect));
}

const smallDump = manyTables(30);
const largeDump = manyTables(30 * GROWTH);
const smallSchema = parse(smallDump, "PostgreSQL");
const largeSchema = parse(largeDump, "PostgreSQL");
growth("dump.parse", () => parse(smallDump, "PostgreSQL"), () => parse(largeDump, "PostgreSQL"));
for (const target of ["PostgreSQL", "MySQL", "SQLite", "MSSQL"] as const) {
  growth(`dump.export.${target}`, () => exportSql(smallSchema, target), () => exportSql(largeSchema, target));
}
const smallChanged = parse(manyTables(30, true), "PostgreSQL");
const largeChanged = parse(manyTables(30 * GROWTH, true), "PostgreSQL");
for (const target of ["PostgreSQL", "MySQL", "SQLite"] as const) {
  growth(`dump.compare.${target}`, () => diffSchemas(smallSchema, smallChanged, target), () => diffSchemas(largeSchema, largeChanged, target));
}

const smallBatch = tsqlBatch(50);
const largeBatch = tsqlBatch(50 * GROWTH);
growth("tsql-batch.parse", () => parse(smallBatch, "MSSQL"), () => parse(largeBatch, "MSSQL"));

report(`SQL engine cost growth (${GROWTH}x the input; target < ${BOUND}x)`, figures);
