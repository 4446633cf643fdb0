/**
 * Export into PostgreSQL, judged by the server: (1) a PostgreSQL schema exported as SQL
 * and loaded again gives the same catalog as the original; (2) every corpus schema of the
 * other dialects, exported into PostgreSQL, loads without an error, the catalog says what
 * the export says, and tables, columns, nullability and keys survive the translation.
 */
import t from "tap";
import { exportSql, parseDdl, type Dialect } from "../../../shared/sqlddl/index.ts";
import { corpusFiles, noCorpus } from "./support/corpus.ts";
import { pgRules, pgScratch, pgTruth } from "./support/pgEngine.ts";
import { clusterMajor, needsNewer } from "./support/pgServers.ts";
import { compareStructure } from "./support/structure.ts";
import { compareTruths, compareWithTruth } from "./support/truth.ts";
import { inParallel } from "./support/parallel.ts";
import { pgDumpStyleSql, pgSchemaSql } from "./fixtures/pgSchema.ts";
import { mysqlSchemaSql } from "./fixtures/mysqlSchema.ts";
import { sqliteSchemaSql } from "./fixtures/sqliteSchema.ts";

const forOurDatabase = (sql: string) => sql.replace(/^[ \t]*(drop|create)[ \t]+database\b[^;\n]*;/gim, "").replace(/^\\c(onnect)?\b.*$/gm, "");
/** What the server refuses in the original too (pagila needs the pgvector extension). */
const refusedAnyway = /vector|film_embedding/;

const major = await clusterMajor();

t.test("PostgreSQL → SQL → PostgreSQL keeps the catalog", (t) => {
  const sources = [
    ...(corpusFiles("PostgreSQL") ?? []),
    { name: "test schema", dialect: "PostgreSQL" as Dialect, text: pgSchemaSql },
    { name: "pg_dump-shaped dump", dialect: "PostgreSQL" as Dialect, text: pgDumpStyleSql },
  ].filter((source) => {
    const tooOld = needsNewer(source.name, major);
    if (tooOld) t.comment(`skipped: ${tooOld}`);
    return !tooOld;
  });
  return inParallel(t, sources, 3, () => Promise.all([pgScratch(t), pgScratch(t)]), async (t, source, [original, copy]) => {
    await original.reset();
    await copy.reset();
    await original.load(forOurDatabase(source.text));
    const errors = await copy.load(exportSql(parseDdl(source.text, "PostgreSQL").schema, "PostgreSQL"));
    t.same(errors.filter((e) => !refusedAnyway.test(e)), [], "the server accepts the export");
    t.same(compareTruths(await pgTruth(original), await pgTruth(copy)), [], "same catalog as the original");
  });
});

const others = (["MySQL", "SQLite", "MSSQL", "Firebird"] as Dialect[]).flatMap((d) => corpusFiles(d) ?? []);
const fixtures = [
  { name: "MySQL test schema", dialect: "MySQL" as Dialect, text: mysqlSchemaSql },
  { name: "SQLite test schema", dialect: "SQLite" as Dialect, text: sqliteSchemaSql },
];

t.test("every other dialect → PostgreSQL", (t) => {
  if (others.length === 0) t.comment(noCorpus);
  const cases = [...others, ...fixtures].map((s) => ({ ...s, name: `${s.name} (${s.dialect})` }));
  return inParallel(t, cases, 4, () => pgScratch(t), async (t, source, scratch) => {
    await scratch.reset();
    const parsed = parseDdl(source.text, source.dialect).schema;
    const sql = exportSql(parsed, "PostgreSQL");
    t.same(await scratch.exec(sql), [], "the server accepts the export");
    const reparsed = parseDdl(sql, "PostgreSQL").schema;
    const rules = await pgRules(scratch.client, reparsed.tables.flatMap((x) => x.fields));
    t.same(compareWithTruth(reparsed, await pgTruth(scratch), rules), [], "the catalog is what the export says");
    t.same(compareStructure(parsed, reparsed), [], "tables, columns, nullability and keys survive");
  });
});
