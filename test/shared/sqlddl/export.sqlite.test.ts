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

/** The id SQLite gives a new row after the row with the highest id was deleted (reused or not). */
function idAfterDeletingTheLast(sql: string, table: string): number {
  const db = new DatabaseSync(":memory:");
  try {
    db.exec(sql);
    for (let i = 0; i < 3; i++) db.exec(`INSERT INTO "${table}" ("name") VALUES ('row ${i}')`);
    db.exec(`DELETE FROM "${table}" WHERE "id" = 3`);
    return Number(db.prepare(`INSERT INTO "${table}" ("name") VALUES ('again') RETURNING "id"`).get()!.id);
  } finally {
    db.close();
  }
}

t.test("AUTOINCREMENT and the plain rowid alias survive SQLite → SQL → SQLite", async (t) => {
  const forms = [
    { name: "AUTOINCREMENT", sql: "CREATE TABLE customers (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL);", keyword: true, nextId: 4 },
    { name: "plain rowid alias", sql: "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL);", keyword: false, nextId: 3 },
    { name: "AUTOINCREMENT after a named key and NOT NULL", sql: "CREATE TABLE customers (id INTEGER NOT NULL CONSTRAINT pk_customers PRIMARY KEY AUTOINCREMENT, name TEXT);", keyword: true, nextId: 4 },
  ];
  for (const form of forms) {
    t.equal(idAfterDeletingTheLast(form.sql, "customers"), form.nextId, `${form.name}: the original ${form.keyword ? "never reuses" : "reuses"} a deleted id`);
    const parsed = parseDdl(form.sql, "SQLite").schema;
    const field = parsed.tables[0]!.fields[0]!;
    t.equal(field.is_auto_increment, true, `${form.name}: parsed as auto-increment (SQLite assigns it)`);
    t.equal(field.sqlite_autoincrement ?? false, form.keyword, `${form.name}: the keyword is recorded as written`);
    const exported = exportSql(parsed, "SQLite");
    t.equal(/PRIMARY KEY AUTOINCREMENT/.test(exported), form.keyword, `${form.name}: the export ${form.keyword ? "keeps" : "does not add"} the keyword:\n${exported}`);
    t.equal(idAfterDeletingTheLast(exported, "customers"), form.nextId, `${form.name}: the exported table behaves as the original`);
    t.same(compareTruths(catalogOf(form.sql), catalogOf(exported)), [], `${form.name}: same catalog`);
    t.equal(exportSql(parseDdl(exported, "SQLite").schema, "SQLite"), exported, `${form.name}: exporting the export changes nothing`);
  }
});

t.test("auto-increment keys of the other engines become AUTOINCREMENT in SQLite (they never reuse a value)", async (t) => {
  const sources: { dialect: Dialect; sql: string }[] = [
    { dialect: "MySQL", sql: "CREATE TABLE customers (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(50));" },
    { dialect: "PostgreSQL", sql: "CREATE TABLE customers (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, name text);" },
    { dialect: "MSSQL", sql: "CREATE TABLE customers (id INT IDENTITY(1,1) PRIMARY KEY, name NVARCHAR(50));" },
  ];
  for (const source of sources) {
    const exported = exportSql(parseDdl(source.sql, source.dialect).schema, "SQLite");
    t.match(exported, /"id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT/, `${source.dialect}: written with the keyword`);
    t.equal(idAfterDeletingTheLast(exported, "customers"), 4, `${source.dialect}: SQLite does not reuse a deleted id`);
  }
  const composite = exportSql(parseDdl("CREATE TABLE links (a INT AUTO_INCREMENT, b INT, name TEXT, PRIMARY KEY (a, b), KEY (a));", "MySQL").schema, "SQLite");
  t.notMatch(composite, /AUTOINCREMENT/, "not on a column of a composite key, where SQLite refuses it");
  t.doesNotThrow(() => catalogOf(composite), "which SQLite runs");
});
