/**
 * SQLite migrations, judged by node:sqlite: load A, run diffSchemas(A → B)'s migration (the
 * table-rebuild procedure where ALTER TABLE cannot do it), and the pragmas must equal those
 * of B created fresh; rows survive a rebuild and the foreign keys still hold.
 */
import { DatabaseSync } from "node:sqlite";
import t from "tap";
import { diffSchemas, exportSql, parseDdl } from "../../../shared/sqlddl/index.ts";
import { MUTATIONS, pair, randomCombinations } from "./fixtures/pairs.ts";
import { HAND_PAIRS } from "./fixtures/handPairs.ts";
import { sqliteTruth } from "./support/sqliteEngine.ts";
import { compareTruths } from "./support/truth.ts";

const cases = [
  ...Object.keys(MUTATIONS).map((m) => ({ name: m, sql: pair([m]).map((s) => exportSql(s, "SQLite")) })),
  ...randomCombinations(8).map((ms) => ({ name: ms.join(" + "), sql: pair(ms).map((s) => exportSql(s, "SQLite")) })),
  ...(HAND_PAIRS.SQLite ?? []).map((p) => ({ name: p.name, sql: [p.before, p.after] })),
];

const open = (sql: string) => {
  const db = new DatabaseSync(":memory:");
  db.exec(sql);
  return db;
};

for (const c of cases) {
  t.test(c.name, async (t) => {
    const [before, after] = c.sql as [string, string];
    const expected = sqliteTruth(open(after));
    const db = open(before);
    const diff = diffSchemas(parseDdl(before, "SQLite").schema, parseDdl(after, "SQLite").schema, "SQLite");
    t.doesNotThrow(() => db.exec(diff.migration_sql), "the migration runs without an error");
    t.same(compareTruths(expected, sqliteTruth(db)), [], "A migrated has B's catalog");
    db.close();
  });
}

t.test("a rebuild keeps the rows and the foreign keys", async (t) => {
  const before = "CREATE TABLE a (id INTEGER PRIMARY KEY, code TEXT UNIQUE, x INT);\nCREATE TABLE b (id INTEGER PRIMARY KEY, a_id INT REFERENCES a (id), label TEXT);";
  const after = "CREATE TABLE a (id INTEGER PRIMARY KEY, code VARCHAR(20) NOT NULL DEFAULT '', x BIGINT);\nCREATE TABLE b (id INTEGER PRIMARY KEY, a_id INT REFERENCES a (id) ON DELETE CASCADE, label TEXT);";
  const db = open(before);
  db.exec("PRAGMA foreign_keys = ON; INSERT INTO a VALUES (1, 'one', 10), (2, 'two', 20); INSERT INTO b VALUES (1, 1, 'x'), (2, 2, 'y');");
  const diff = diffSchemas(parseDdl(before, "SQLite").schema, parseDdl(after, "SQLite").schema, "SQLite");
  t.match(diff.migration_sql, /_sqlddl_new_a/, "table a is rebuilt");
  db.exec(diff.migration_sql);
  t.same(db.prepare("SELECT id, code, x FROM a ORDER BY id").all().map((r) => ({ ...r })), [{ id: 1, code: "one", x: 10 }, { id: 2, code: "two", x: 20 }]);
  t.same(db.prepare("PRAGMA foreign_key_check").all(), [], "no dangling references");
  db.exec("PRAGMA foreign_keys = ON; DELETE FROM a WHERE id = 1");
  t.same(db.prepare("SELECT id FROM b ORDER BY id").all().map((r) => r.id), [2], "the new ON DELETE CASCADE works");
  t.same(diff.differences.modified_tables.a?.modified_columns.map((m) => m.name), ["code", "x"]);
  t.same(diff.differences.modified_tables.a?.removed_constraints.map((k) => k.type), ["unique"]);
});
