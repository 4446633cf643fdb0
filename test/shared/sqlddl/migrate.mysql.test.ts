/**
 * MySQL/MariaDB migrations, judged by the server when one listens on 127.0.0.1:3306: load
 * A, run diffSchemas(A → B)'s migration, and information_schema must equal that of B
 * created fresh. Skips with a message when there is no server.
 */
import t from "tap";
import { diffSchemas, exportSql, parseDdl } from "../../../shared/sqlddl/index.ts";
import { MUTATIONS, pair, randomCombinations } from "./fixtures/pairs.ts";
import { HAND_PAIRS } from "./fixtures/handPairs.ts";
import { mysqlAvailable, mysqlScratch, mysqlTruth } from "./support/mysqlEngine.ts";
import { inParallel } from "./support/parallel.ts";
import { compareTruths } from "./support/truth.ts";

const unavailable = await mysqlAvailable();
const cases = [
  ...Object.keys(MUTATIONS).map((m) => ({ name: m, sql: pair([m]).map((s) => exportSql(s, "MySQL")) })),
  ...randomCombinations(8).map((ms) => ({ name: ms.join(" + "), sql: pair(ms).map((s) => exportSql(s, "MySQL")) })),
  ...(HAND_PAIRS.MySQL ?? []).map((p) => ({ name: p.name, sql: [p.before, p.after] })),
];

t.test("migrations", { skip: unavailable ?? false }, (t) =>
  inParallel(
    t,
    cases,
    4,
    async () => null,
    async (t, c) => {
      const [before, after] = c.sql as [string, string];
      const expected = await mysqlScratch(t);
      t.same(await expected.exec(after), [], "B loads");
      const db = await mysqlScratch(t);
      t.same(await db.exec(before), [], "A loads");
      const diff = diffSchemas(parseDdl(before, "MySQL").schema, parseDdl(after, "MySQL").schema, "MySQL");
      t.same(await db.exec(diff.migration_sql), [], "the migration runs without an error");
      t.same(compareTruths(await mysqlTruth(expected), await mysqlTruth(db)), [], "A migrated has B's catalog");
    },
  ),
);
