/**
 * MySQL/MariaDB fidelity, when a server listens on 127.0.0.1:3306: every corpus file and a
 * schema written here are loaded with the server's command-line client, and the parser's
 * reading of the same text, and of `mariadb-dump --no-data`, must match information_schema.
 * Without a server the file skips with a message (the suite passes without one).
 */
import t from "tap";
import { parseDdl } from "../../../shared/sqlddl/index.ts";
import { corpusFiles, noCorpus } from "./support/corpus.ts";
import { intoDatabase, mysqlAvailable, mysqlRules, mysqlScratch, mysqlTruth } from "./support/mysqlEngine.ts";
import { compareWithTruth } from "./support/truth.ts";
import { mysqlSchemaSql } from "./fixtures/mysqlSchema.ts";

const unavailable = await mysqlAvailable();

t.test("corpus files", { skip: unavailable ?? (corpusFiles("MySQL") ? false : noCorpus) }, async (t) => {
  for (const file of corpusFiles("MySQL")!) {
    t.test(file.name, async (t) => {
      const scratch = await mysqlScratch(t);
      const errors = await scratch.load(intoDatabase(file.text, scratch.name));
      t.same(errors, [], "the server accepts the file");
      const truth = await mysqlTruth(scratch);
      t.ok(truth.length > 0, `the server created ${truth.length} tables`);
      t.same(compareWithTruth(parseDdl(file.text, "MySQL").schema, truth, mysqlRules), [], "the file, parsed, matches the catalog");
      const dump = parseDdl(await scratch.dump(), "MySQL");
      t.same(compareWithTruth(dump.schema, truth, mysqlRules), [], "mariadb-dump --no-data, parsed, matches the catalog");
      t.same(dump.warnings.filter((w) => !/^skipped CREATE VIEW /.test(w.message)), [], "the dump parses with no warning but skipped views");
    });
  }
});

t.test("a schema written for the tests", { skip: unavailable ?? false }, async (t) => {
  const scratch = await mysqlScratch(t);
  t.same(await scratch.load(mysqlSchemaSql), [], "the server accepts the schema");
  const truth = await mysqlTruth(scratch);
  t.equal(truth.length, 4);
  t.same(compareWithTruth(parseDdl(mysqlSchemaSql, "MySQL").schema, truth, mysqlRules), [], "the script, parsed, matches the catalog");
  const dump = parseDdl(await scratch.dump(), "MySQL");
  t.same(compareWithTruth(dump.schema, truth, mysqlRules), [], "mariadb-dump --no-data, parsed, matches the catalog");
  t.same(dump.warnings, [], "the dump parses without warnings");
});
