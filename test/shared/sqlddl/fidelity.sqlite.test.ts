/**
 * SQLite fidelity: every corpus file and a schema written here run in node:sqlite, and the
 * parser's reading of the same text, and of the sqlite3 shell's `.schema` of it, must
 * match the pragmas (tables, columns, declared types and sizes, nullability, rowid
 * auto-increment, primary, foreign and unique keys).
 */
import { DatabaseSync } from "node:sqlite";
import t, { type Test } from "tap";
import { parseDdl } from "../../../shared/sqlddl/index.ts";
import { corpusFiles, noCorpus } from "./support/corpus.ts";
import { sqliteDotSchema, sqliteRules, sqliteTruth } from "./support/sqliteEngine.ts";
import { compareWithTruth } from "./support/truth.ts";
import { sqliteSchemaSql } from "./fixtures/sqliteSchema.ts";

function checkBoth(t: Test, sql: string) {
  const db = new DatabaseSync(":memory:");
  db.exec(sql);
  const truth = sqliteTruth(db);
  db.close();
  t.ok(truth.length > 0, `the engine created ${truth.length} tables`);
  t.same(compareWithTruth(parseDdl(sql, "SQLite").schema, truth, sqliteRules), [], "the script, parsed, matches the catalog");
  return truth;
}

t.test("corpus files", { skip: corpusFiles("SQLite") ? false : noCorpus }, async (t) => {
  for (const file of corpusFiles("SQLite")!) {
    t.test(file.name, async (t) => {
      const truth = checkBoth(t, file.text);
      const dump = await sqliteDotSchema(file.text);
      t.same(compareWithTruth(parseDdl(dump.text, "SQLite").schema, truth, sqliteRules), [], `the engine's own dump (${dump.source}), parsed, matches the catalog`);
    });
  }
});

t.test("a schema written for the tests", async (t) => {
  const truth = checkBoth(t, sqliteSchemaSql);
  t.equal(truth.length, 6);
  const dump = await sqliteDotSchema(sqliteSchemaSql);
  const parsed = parseDdl(dump.text, "SQLite");
  t.same(compareWithTruth(parsed.schema, truth, sqliteRules), [], `the engine's own dump (${dump.source}), parsed, matches the catalog`);
  t.same(parsed.warnings, [], "the dump parses without warnings");
});
