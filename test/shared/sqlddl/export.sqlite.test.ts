/**
 * Export into SQLite, judged by node:sqlite: (1) a SQLite schema exported as SQL and run
 * again gives the same pragmas as the original; (2) every corpus schema of the other
 * dialects, exported into SQLite, runs without an error, the pragmas say what the export
 * says, and tables, columns, nullability and keys survive the translation.
 */
import { DatabaseSync } from "node:sqlite";
import t from "tap";
import { exportSql, parseDdl, type Dialect } from "../../../shared/sqlddl/index.ts";
import { corpusFiles, noCorpus } from "./support/corpus.ts";
import { sqliteRules, sqliteTruth } from "./support/sqliteEngine.ts";
import { compareStructure } from "./support/structure.ts";
import { compareTruths, compareWithTruth } from "./support/truth.ts";
import { mysqlSchemaSql } from "./fixtures/mysqlSchema.ts";
import { pgSchemaSql } from "./fixtures/pgSchema.ts";
import { sqliteSchemaSql } from "./fixtures/sqliteSchema.ts";

const catalogOf = (sql: string) => {
  const db = new DatabaseSync(":memory:");
  try {
    db.exec(sql);
    return sqliteTruth(db);
  } finally {
    db.close();
  }
};

t.test("SQLite → SQL → SQLite keeps the catalog", async (t) => {
  for (const source of [...(corpusFiles("SQLite") ?? []), { name: "test schema", text: sqliteSchemaSql }]) {
    const sql = exportSql(parseDdl(source.text, "SQLite").schema, "SQLite");
    t.same(compareTruths(catalogOf(source.text), catalogOf(sql)), [], `${source.name}: same catalog as the original`);
  }
});

const sources = [
  ...(["MySQL", "PostgreSQL", "MSSQL", "Firebird"] as Dialect[]).flatMap((d) => corpusFiles(d) ?? []),
  { name: "MySQL test schema", dialect: "MySQL" as Dialect, text: mysqlSchemaSql },
  { name: "PostgreSQL test schema", dialect: "PostgreSQL" as Dialect, text: pgSchemaSql },
];

t.test("every other dialect → SQLite", async (t) => {
  if (!corpusFiles("MySQL")) t.comment(noCorpus);
  for (const source of sources) {
    t.test(`${source.name} (${source.dialect})`, async (t) => {
      const parsed = parseDdl(source.text, source.dialect).schema;
      const sql = exportSql(parsed, "SQLite");
      let truth: ReturnType<typeof sqliteTruth> = [];
      t.doesNotThrow(() => (truth = catalogOf(sql)), "SQLite runs the export");
      const reparsed = parseDdl(sql, "SQLite").schema;
      t.same(compareWithTruth(reparsed, truth, sqliteRules), [], "the catalog is what the export says");
      t.same(compareStructure(parsed, reparsed), [], "tables, columns, nullability and keys survive");
    });
  }
});
