/**
 * A long parse must not stall the worker process. The worker runs in this process (see
 * test/support/app.ts), so a parse on its thread would stop this event loop and the
 * worker's heartbeat timer with it; the sweeper would then take the worker for dead after
 * WORKER_STALE_AFTER_MS (1.5 s here) and hand its jobs to another worker. Parses run on
 * parse threads instead, and a thread that outlives SCHEMA_PARSE_TIMEOUT_MS is stopped even
 * when the parser is inside one statement (where it cannot check its deadline).
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../shared/db/pool.ts";
import { startTestApp } from "../support/app.ts";
import { buildUserWithToken } from "../support/factories.ts";
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

// One CREATE TABLE with 20,000 columns: the parser spends seconds inside this single
// statement (it checks its deadline only between statements).
const oneHugeStatement = `CREATE TABLE wide (${Array.from({ length: 20_000 }, (_, i) => `c${i} varchar(100) NOT NULL DEFAULT 'x'`).join(",\n")});`;
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
    const { result: res, pauseMs } = await longestPause(() => api.post("/api/sql-parse", { sql_text: oneHugeStatement, database_type: "PostgreSQL" }));
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
