/**
 * PostgreSQL migrations, judged by the server: load schema A, apply diffSchemas(A → B)'s
 * migration SQL, and the catalog must equal that of B loaded fresh. Over every generated
 * pair (fixtures/pairs.ts), random combinations of them, and hand-written pairs.
 */
import t from "tap";
import { diffSchemas, exportSql, parseDdl } from "../../../shared/sqlddl/index.ts";
import { MUTATIONS, pair, randomCombinations } from "./fixtures/pairs.ts";
import { HAND_PAIRS } from "./fixtures/handPairs.ts";
import { pgNamespace, pgScratch } from "./support/pgEngine.ts";
import { compareTruths } from "./support/truth.ts";
import { inParallel } from "./support/parallel.ts";

const cases = [
  ...Object.keys(MUTATIONS).map((m) => ({ name: m, sql: pair([m]).map((s) => exportSql(s, "PostgreSQL")) })),
  ...randomCombinations(8).map((ms) => ({ name: ms.join(" + "), sql: pair(ms).map((s) => exportSql(s, "PostgreSQL")) })),
  ...(HAND_PAIRS.PostgreSQL ?? []).map((p) => ({ name: p.name, sql: [p.before, p.after] })),
];

t.test("migrations", (t) =>
  inParallel(
    t,
    cases.map((c, i) => ({ ...c, n: i })),
    4,
    () => pgScratch(t),
    async (t, c, scratch) => {
      const [before, after] = c.sql as [string, string];
      const expected = await pgNamespace(scratch, `b${c.n}`);
      t.same(await expected.exec(after), [], "B loads");
      const db = await pgNamespace(scratch, `a${c.n}`);
      t.same(await db.exec(before), [], "A loads");
      const diff = diffSchemas(parseDdl(before, "PostgreSQL").schema, parseDdl(after, "PostgreSQL").schema, "PostgreSQL");
      t.same(await db.exec(diff.migration_sql), [], "the migration runs without an error");
      t.same(compareTruths(await expected.truth(), await db.truth()), [], "A migrated has B's catalog");
    },
  ),
);
