/**
 * Export into MySQL/MariaDB, judged by the server when one listens on 127.0.0.1:3306:
 * (1) a MySQL schema exported as SQL and loaded again gives the same information_schema
 * as the original; (2) every corpus schema of the other dialects, exported into MySQL,
 * loads without an error, the catalog says what the export says, and tables, columns,
 * nullability and keys survive. Skips with a message when there is no server.
 */
import t from "tap";
import { exportSql, parseDdl, type Dialect } from "../../../shared/sqlddl/index.ts";
import { corpusFiles, noCorpus } from "./support/corpus.ts";
import { intoDatabase, mysqlAvailable, mysqlRules, mysqlScratch, mysqlTruth } from "./support/mysqlEngine.ts";
import { compareStructure } from "./support/structure.ts";
import { compareTruths, compareWithTruth } from "./support/truth.ts";
import { inParallel } from "./support/parallel.ts";
import { mysqlSchemaSql } from "./fixtures/mysqlSchema.ts";
import { pgSchemaSql } from "./fixtures/pgSchema.ts";
import { sqliteSchemaSql } from "./fixtures/sqliteSchema.ts";

const unavailable = await mysqlAvailable();

t.test("MySQL → SQL → MySQL keeps the catalog", { skip: unavailable ?? false }, (t) => {
  const sources = [...(corpusFiles("MySQL") ?? []), { name: "test schema", text: mysqlSchemaSql }];
  return inParallel(t, sources, 4, async () => null, async (t, source) => {
    const original = await mysqlScratch(t);
    await original.load(intoDatabase(source.text, original.name));
    const copy = await mysqlScratch(t);
    t.same(await copy.exec(exportSql(parseDdl(source.text, "MySQL").schema, "MySQL")), [], "the server accepts the export");
    t.same(compareTruths(await mysqlTruth(original), await mysqlTruth(copy)), [], "same catalog as the original");
  });
});

const sources = [
  ...(["PostgreSQL", "SQLite", "MSSQL", "Firebird"] as Dialect[]).flatMap((d) => corpusFiles(d) ?? []),
  { name: "PostgreSQL test schema", dialect: "PostgreSQL" as Dialect, text: pgSchemaSql },
  { name: "SQLite test schema", dialect: "SQLite" as Dialect, text: sqliteSchemaSql },
];

t.test("every other dialect → MySQL", { skip: unavailable ?? false }, (t) => {
  if (!corpusFiles("PostgreSQL")) t.comment(noCorpus);
  const cases = sources.map((s) => ({ ...s, name: `${s.name} (${s.dialect})` }));
  return inParallel(t, cases, 4, async () => null, async (t, source) => {
    const parsed = parseDdl(source.text, source.dialect).schema;
    const sql = exportSql(parsed, "MySQL");
    const scratch = await mysqlScratch(t);
    t.same(await scratch.exec(sql), [], "the server accepts the export");
    const reparsed = parseDdl(sql, "MySQL").schema;
    t.same(compareWithTruth(reparsed, await mysqlTruth(scratch), mysqlRules), [], "the catalog is what the export says");
    t.same(compareStructure(parsed, reparsed), [], "tables, columns, nullability and keys survive");
  });
});
