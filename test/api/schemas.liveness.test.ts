/**
 * A long parse must not stall the worker process, nor a large export or comparison the web
 * process. The worker runs in this process (see
 * test/support/app.ts), so a parse on its thread would stop this event loop and the
 * worker's heartbeat timer with it; the sweeper would then take the worker for dead after
 * WORKER_STALE_AFTER_MS (1.5 s here) and hand its jobs to another worker. Parses run on
 * parse threads instead, and a thread that outlives SCHEMA_PARSE_TIMEOUT_MS is stopped even
 * when the parser is inside one statement (where it cannot check its deadline). SQL exports
 * and comparisons of large schemas run on those threads too.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../shared/db/pool.ts";
import { startTestApp } from "../support/app.ts";
import { buildProject, buildUserWithToken } from "../support/factories.ts";
import { client } from "../support/http.ts";

/** The longest pause of this event loop while `work` runs, in ms. */
async function longestPause<T>(work: () => Promise<T>): Promise<{ result: T; pauseMs: number }> {
  let last = performance.now();
  let pauseMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    pauseMs = Math.max(pauseMs, now - last);
    last = now;
  }, 10);
  try {
    const result = await work();
    pauseMs = Math.max(pauseMs, performance.now() - last);
    return { result, pauseMs };
  } finally {
    clearInterval(timer);
  }
}

// One T-SQL batch of 10,000 CREATE TABLEs with neither GO nor semicolons: one statement to
// the splitter, so the parser checks its deadline only before it, and modelling the batch
// statement by statement takes seconds (each one re-slices the rest of the batch).
const oneHugeStatement = Array.from({ length: 10_000 }, (_, i) => `CREATE TABLE t${i} (id int PRIMARY KEY, name varchar(100) NOT NULL DEFAULT 'x', at datetime)`).join("\n");
// Many small statements: the parser stops itself at the deadline and names where.
const manyStatements = Array.from({ length: 60_000 }, (_, i) => `CREATE TABLE t${i} (id int PRIMARY KEY, name varchar(100) NOT NULL DEFAULT 'x', at timestamp);`).join("\n");

t.test("a parse at its time limit leaves the worker's event loop and heartbeat running", async (t) => {
  const app = await startTestApp(t, { worker: true, env: { SCHEMA_SQL_MAX_BYTES: String(8 * 1024 * 1024), SCHEMA_PARSE_TIMEOUT_MS: "300" } });
  const { token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const processId = app.worker!.heartbeat.processId;
  const beat = () => app.pool.oneFirst(sql.type(z.object({ beat_at: z.date() }))`select beat_at from worker_processes where id = ${processId}`);

  t.test("inside one long statement: the thread is stopped at the limit, 422", async (t) => {
    const beats: number[] = [];
    let requesting = true;
    const sampling = (async () => {
      while (requesting) {
        const at = (await beat()).getTime();
        if (beats.at(-1) !== at) beats.push(at);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const started = Date.now();
    const { result: res, pauseMs } = await longestPause(() => api.post("/api/sql-parse", { sql_text: oneHugeStatement, database_type: "MSSQL" }));
    requesting = false;
    await sampling;
    t.equal(res.status, 422, res.text.slice(0, 300));
    t.equal(res.body.code, "sql_parse_failed");
    t.match(res.body.errors?.sql_text?.[0], /took too long to parse/);
    t.ok(Date.now() - started < 5000, `answered in ${Date.now() - started} ms, not after the whole parse`);
    t.ok(pauseMs < 500, `the event loop never paused long (longest ${Math.round(pauseMs)} ms)`);
    const gaps = beats.slice(1).map((at, i) => at - beats[i]!);
    t.ok(beats.length >= 3, `the heartbeat kept beating during the parse (${beats.length} beats)`);
    t.ok(Math.max(...gaps) < 1000, `no gap between beats reached the stale threshold (${gaps.join(", ")} ms)`);
    const job = await app.pool.one(sql.type(z.object({ status: z.string(), attempts: z.number() }))`
      select status, attempts from jobs where kind = 'schemas__parse' order by id desc limit 1`);
    t.same(job, { status: "failed", attempts: 1 }, "failed once; never handed to another worker");
  });

  t.test("across many statements: the parser stops itself and names the statement it reached", async (t) => {
    const { result: res, pauseMs } = await longestPause(() => api.post("/api/sql-parse", { sql_text: manyStatements, database_type: "PostgreSQL" }));
    t.equal(res.status, 422, res.text.slice(0, 300));
    const [, line] = /^Line (\d+), column \d+: The SQL took too long to parse\.$/.exec(res.body.errors?.sql_text?.[0] ?? "") ?? [];
    t.ok(Number(line) > 1, `stopped at line ${line}`);
    // On this thread the parse would block it for the whole 300 ms limit.
    t.ok(pauseMs < 250, `the event loop never paused long (longest ${Math.round(pauseMs)} ms)`);
  });

  t.test("parse threads keep working after one was stopped", async (t) => {
    const res = await api.post("/api/sql-parse", { sql_text: "CREATE TABLE after_stop (id int PRIMARY KEY);", database_type: "PostgreSQL" });
    t.equal(res.status, 200, res.text);
    t.match(res.body.parse.tables, [{ table_name: "after_stop" }]);
  });
});

/** A pg_dump-shaped dump of `n` tables, each referencing the one before; `changed` alters and drops some. */
function manyTables(n: number, changed = false): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    if (changed && i % 13 === 5) continue;
    const columns = ["id integer NOT NULL", ...(i > 0 ? ["parent_id integer"] : []), ...Array.from({ length: 10 }, (_, c) => `col_${c} ${c % 2 ? "text" : "numeric(12,2)"}`)];
    if (changed && i % 7 === 0) columns.push("note text");
    out.push(`CREATE TABLE public.t_${i} (\n    ${columns.join(",\n    ")}\n);`, `ALTER TABLE ONLY public.t_${i} ADD CONSTRAINT t_${i}_pkey PRIMARY KEY (id);`);
    if (i > 0 && !(changed && i % 13 === 6)) out.push(`ALTER TABLE ONLY public.t_${i} ADD CONSTRAINT t_${i}_parent_fkey FOREIGN KEY (parent_id) REFERENCES public.t_${i - 1}(id);`);
  }
  return out.join("\n");
}

t.test("a SQL export and a comparison of 6,000-table schemas leave the web process's event loop free", async (t) => {
  const app = await startTestApp(t, { worker: true });
  const alice = await buildUserWithToken(app.pool);
  const api = client(app.url, alice.token);
  const auth = { authorization: `Bearer ${alice.token}` };
  const base = `/api/projects/${await buildProject(app.pool, alice.user.id)}/schemas`;
  const create = async (sqlText: string) => {
    const res = await api.post(base, { name: "big", sql_text: sqlText, database_type: "PostgreSQL" });
    t.equal(res.status, 201, res.text.slice(0, 300));
    return res.body.schema.id as number;
  };
  const tables = 6000;
  const from = await create(manyTables(tables));
  const to = await create(manyTables(tables, true));

  // Pauses are judged against decoding the stored parse (16 MB of JSON here), measured now on
  // this same event loop, so a loaded machine slows the bound and the measurement alike. With
  // the work on the threads the longest pause is about one decoding (reading the text from the
  // database is most of it); the old main-thread path decoded, validated and exported, 5 to 10
  // times as long. The bound is three decodings.
  const storedText = async (id: number) =>
    app.pool.oneFirst(sql.type(z.object({ t: z.string() }))`select parsed::text as t from schemas where id = ${id}`);
  const decodeMs = async (...ids: number[]) => {
    const texts = await Promise.all(ids.map(storedText));
    const times: number[] = [];
    for (let round = 0; round < 3; round += 1) {
      const started = performance.now();
      for (const text of texts) JSON.parse(text);
      times.push(performance.now() - started);
    }
    return times.sort((a, b) => a - b)[1]!;
  };
  const exportBound = 3 * (await decodeMs(from));
  for (const dialect of ["postgres", "mysql"]) {
    // Measured until the answer's headers arrive: reading a body of megabytes is this test's
    // own work on the same event loop, not the service's.
    const { result: res, pauseMs } = await longestPause(() => fetch(`${app.url}${base}/${from}/export?database_type=${dialect}`, { headers: auth }));
    t.equal(res.status, 200);
    t.match(res.headers.get("content-type"), /^application\/sql/);
    t.equal((await res.text()).match(/^CREATE TABLE /gm)?.length, tables, `${dialect}: every table exported`);
    t.ok(pauseMs < exportBound, `${dialect} export: the event loop paused for less than three decodings of the parse (longest ${Math.round(pauseMs)} ms, bound ${Math.round(exportBound)} ms)`);
  }
  const compareBound = 3 * (await decodeMs(from, to));
  const { result: answer, pauseMs } = await longestPause(() =>
    fetch(`${app.url}${base}/compare`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify({ schema_id_1: from, schema_id_2: to }) }),
  );
  const res = { status: answer.status, body: (await answer.json()) as { database_type: string; differences: { removed_tables: string[]; modified_tables: Record<string, { added_columns: string[] }> }; migration_sql: string } };
  t.equal(res.status, 200);
  t.equal(res.body.database_type, "PostgreSQL");
  t.equal(res.body.differences.removed_tables.length, Math.ceil((tables - 5) / 13));
  t.same(res.body.differences.modified_tables.t_7?.added_columns, ["note"]);
  t.match(res.body.migration_sql, /ALTER TABLE "t_7" ADD COLUMN "note" text/);
  t.ok(pauseMs < compareBound, `compare: the event loop paused for less than three decodings of both parses (longest ${Math.round(pauseMs)} ms, bound ${Math.round(compareBound)} ms)`);
});
