/**
 * The parse threads' exports and comparisons: the same text as the engine writes in
 * process, a clear failure for a stored parse that is not a schema, and a thread that
 * outlives its time limit is stopped with SchemaWorkTimeout while the pool keeps working.
 * A parse inside one long statement (where the parser cannot check its own deadline) is
 * stopped from outside with the parser's "took too long" error.
 */
import t from "tap";
import { DdlParseError } from "../../../shared/sqlddl/errors.ts";
import { ParsePool, SchemaWorkTimeout } from "../../../shared/schemas/parsePool.ts";
import { diffSchemas, exportSql, parseDdl } from "../../../shared/sqlddl/index.ts";

/** `n` tables, each referencing the one before; `changed` alters some and drops others. */
function tables(n: number, changed = false): string {
  return Array.from({ length: n }, (_, i) => {
    const extra = changed && i % 7 === 0 ? ", note text" : "";
    const parent = i > 0 ? `, parent_id integer REFERENCES t_${i - 1} (id)` : "";
    return changed && i % 13 === 5 ? "" : `CREATE TABLE t_${i} (id integer PRIMARY KEY, name varchar(${changed && i % 11 === 0 ? 80 : 40}) NOT NULL${parent}${extra});`;
  }).join("\n");
}

const text = async (reply: ReturnType<ParsePool["run"]>) => {
  const answer = await reply;
  if (!("text" in answer)) throw new Error("expected text");
  return answer.text;
};

t.test("exports and comparisons on a thread answer what the engine writes in process", async (t) => {
  const pool = new ParsePool(2);
  const from = parseDdl(tables(40), "PostgreSQL").schema;
  const to = parseDdl(tables(40, true), "PostgreSQL").schema;
  for (const dialect of ["PostgreSQL", "MySQL", "SQLite"] as const) {
    t.equal(await text(pool.run({ kind: "export", parsedJson: JSON.stringify(from), dialect, maxMs: 10_000 })), exportSql(from, dialect), `export to ${dialect}`);
    const compared = JSON.parse(await text(pool.run({ kind: "compare", fromJson: JSON.stringify(from), toJson: JSON.stringify(to), dialect, maxMs: 10_000 })));
    t.same(compared, { ...diffSchemas(from, to, dialect), database_type: dialect }, `comparison for ${dialect}`);
  }
});

t.test("a stored parse that is not a schema fails the request, not the pool", async (t) => {
  const pool = new ParsePool(1);
  await t.rejects(pool.run({ kind: "export", parsedJson: '{"dialect":"PostgreSQL","tables":[{"table_name":1}]}', dialect: "MySQL", maxMs: 10_000 }), /schema thread failed \(export\)/);
  await t.rejects(pool.run({ kind: "compare", fromJson: "not json", toJson: "{}", dialect: "MySQL", maxMs: 10_000 }), /schema thread failed \(compare\)/);
  const after = await pool.run({ kind: "parse", sqlText: "CREATE TABLE a (id int);", dialect: "MySQL", maxMs: 10_000 });
  t.ok("result" in after && after.result.schema.tables.length === 1, "the next request is answered");
});

t.test("an export past its time limit is stopped with SchemaWorkTimeout; the pool goes on", async (t) => {
  const pool = new ParsePool(1, 0);
  const big = JSON.stringify(parseDdl(tables(3000), "PostgreSQL").schema);
  const small = JSON.stringify(parseDdl(tables(2), "PostgreSQL").schema);
  // The thread is started (and its modules loaded) first, so the time below is the limit's
  // reaction alone: on a loaded machine the start took most of the 5 s by itself.
  await pool.run({ kind: "export", parsedJson: small, dialect: "MySQL", maxMs: 60_000 });
  const started = performance.now();
  const error = await pool.run({ kind: "export", parsedJson: big, dialect: "MySQL", maxMs: 1 }).catch((e: unknown) => e);
  t.type(error, SchemaWorkTimeout);
  t.match((error as Error).message, /^The SQL export took longer than 0\.001 s$/);
  t.ok(performance.now() - started < 5000, "stopped, not waited for");
  const compare = await pool.run({ kind: "compare", fromJson: big, toJson: big, dialect: "MySQL", maxMs: 1 }).catch((e: unknown) => e);
  t.match(compare, { name: "SchemaWorkTimeout", message: /^The comparison took longer/ });
  t.match(await text(pool.run({ kind: "export", parsedJson: small, dialect: "MySQL", maxMs: 10_000 })), /CREATE TABLE `t_1`/, "a new thread takes the next request");
});

t.test("a parse inside one long statement is stopped from outside at its limit; the pool goes on", async (t) => {
  // One T-SQL batch of 16,000 CREATE TABLEs with neither GO nor semicolons: a single statement,
  // so the parser checks its deadline only before it. With no grace the watchdog stops the
  // thread a millisecond after it started, long before the statement (tens of ms) is read.
  const oneStatement = Array.from({ length: 16_000 }, (_, i) => `CREATE TABLE t${i} (id int PRIMARY KEY, name varchar(100) NOT NULL DEFAULT 'x', at datetime)`).join("\n");
  const pool = new ParsePool(1, 0);
  const error = await pool.run({ kind: "parse", sqlText: oneStatement, dialect: "MSSQL", maxMs: 1 }).catch((e: unknown) => e);
  t.type(error, DdlParseError);
  t.match(error, { message: /took too long to parse/, line: 1, column: 1 });
  const after = await pool.run({ kind: "parse", sqlText: "CREATE TABLE after_stop (id int);", dialect: "MSSQL", maxMs: 10_000 });
  t.ok("result" in after && after.result.schema.tables[0]?.table_name === "after_stop", "a new thread takes the next parse");
});
