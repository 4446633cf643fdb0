/**
 * A long parse must not stall the worker process, nor a large export or comparison the web
 * process. The worker runs in this process (see
 * test/support/app.ts), so a parse on its thread would stop this event loop and the
 * worker's heartbeat timer with it; the sweeper would then take the worker for dead after
 * WORKER_STALE_AFTER_MS and hand its jobs to another worker. Parses run on
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
import { until } from "../support/wait.ts";

/** The longest pause of this event loop while `work` runs, in ms (reported, never a bound). */
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

// Many small statements (about 14 MB, several times what the parser reads before its deadline
// on an idle machine): the parser stops itself at the deadline and names where.
const manyStatements = Array.from({ length: 150_000 }, (_, i) => `CREATE TABLE t${i} (id int PRIMARY KEY, name varchar(100) NOT NULL DEFAULT 'x', at timestamp);`).join("\n");

/*
 * No clock decides these tests. While a parse job runs (seen in the jobs table), this event
 * loop (the worker's and the web process's) must serve /api/health and keep the worker's
 * heartbeat advancing; a parse on this thread would block both until it ended, so the health
 * answer would come after the parse's, and no beat would fall inside the run.
 */
t.test("a parse at its time limit leaves the worker's event loop and heartbeat running", async (t) => {
  const app = await startTestApp(t, { worker: true, env: { SCHEMA_SQL_MAX_BYTES: String(16 * 1024 * 1024), SCHEMA_PARSE_TIMEOUT_MS: "500", WORKER_STALE_AFTER_MS: "10000" } });
  const { token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const processId = app.worker!.heartbeat.processId;
  const beat = () => app.pool.oneFirst(sql.type(z.object({ beat_at: z.date() }))`select beat_at from worker_processes where id = ${processId}`);
  const parseJob = () =>
    app.pool.maybeOne(sql.type(z.object({ id: z.number(), status: z.string(), attempts: z.number() }))`
      select id, status, attempts from jobs where kind = 'schemas__parse' order by id desc limit 1`);

  /** Sends a parse; once its job runs, asks /api/health and reads the heartbeat until it moves. */
  const parseWhileWatching = async (sqlText: string, databaseType: string) => {
    const seen = (await parseJob())?.id ?? 0;
    let pending = true;
    const parse = api.post("/api/sql-parse", { sql_text: sqlText, database_type: databaseType }).finally(() => (pending = false));
    const running = await until(async () => {
      const job = await parseJob();
      return job && job.id > seen && job.status === "running" ? job : null;
    }, { message: "the parse job to run" });
    const beatBefore = (await beat()).getTime();
    const health = await client(app.url).get("/api/health");
    const healthWhilePending = pending;
    const beatMoved = await until(async () => !pending || (await beat()).getTime() > beatBefore, { message: "the heartbeat or the parse" }) && pending;
    return { running, health, healthWhilePending, beatMoved, res: await parse };
  };

  t.test("across many statements: the parser stops itself and names the statement it reached", async (t) => {
    const watched = await parseWhileWatching(manyStatements, "PostgreSQL");
    const { res } = watched;
    t.equal(res.status, 422, res.text.slice(0, 300));
    const [, line] = /^Line (\d+), column \d+: The SQL took too long to parse\.$/.exec(res.body.errors?.sql_text?.[0] ?? "") ?? [];
    t.ok(Number(line) > 1, `stopped at line ${line}`);
    t.ok(Number(line) < 150_000, "before the last statement");
    t.equal(watched.health.status, 200);
    t.ok(watched.healthWhilePending, "/api/health answered while the parse was still running");
  });

  t.test("parse threads keep working after a parse was stopped", async (t) => {
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

t.test("a SQL export and a comparison of 3,000-table schemas leave the web process's event loop free", async (t) => {
  const app = await startTestApp(t, { worker: true });
  const alice = await buildUserWithToken(app.pool);
  const api = client(app.url, alice.token);
  const auth = { authorization: `Bearer ${alice.token}` };
  const base = `/api/projects/${await buildProject(app.pool, alice.user.id)}/schemas`;
  // Asked to answer at once (202) and followed to the end: how long a 3,000-table parse takes
  // on a busy machine decides nothing here.
  const create = async (name: string, sqlText: string) => {
    const res = await api.post(base, { name, sql_text: sqlText, database_type: "PostgreSQL" }, { headers: { prefer: "respond-async" } });
    t.equal(res.status, 202, res.text.slice(0, 300));
    const job = await until(async () => {
      const read = await api.get(`/api/jobs/${res.body.job.id}`);
      return ["succeeded", "failed", "cancelled"].includes(read.body.job?.status) ? read : null;
    }, { timeoutMs: 120_000, message: `the parse of ${name}` });
    t.equal(job.body.job?.status, "succeeded", job.text.slice(0, 300));
    return app.pool.oneFirst(sql.type(z.object({ id: z.number() }))`select id from schemas where name = ${name}`);
  };
  // Large enough that each export and the comparison outlast many /api/health answers (their
  // cost grows with the table count; twice as many tables proved nothing more).
  const tables = 3000;
  const from = await create("big", manyTables(tables));
  const to = await create("bigger", manyTables(tables, true));

  /**
   * Runs `work` and asks /api/health over and over while it is pending: the export and the
   * comparison run on parse threads, so this event loop keeps answering meanwhile. The
   * longest pause of the loop is reported, not judged (`npm run bench` measures speed).
   */
  const servedDuring = async <T>(what: string, work: () => Promise<T>) => {
    let pending = true;
    let answered = 0;
    const { result, pauseMs } = await longestPause(async () => {
      const running = work().finally(() => (pending = false));
      const asking = (async () => {
        while (pending) if ((await client(app.url).get("/api/health")).status === 200 && pending) answered += 1;
      })();
      const [value] = await Promise.all([running, asking]);
      return value;
    });
    t.ok(answered >= 1, `${what}: /api/health answered ${answered} time(s) while it ran`);
    t.comment(`${what}: longest pause of the event loop ${Math.round(pauseMs)} ms`);
    return result;
  };
  for (const dialect of ["postgres", "mysql"]) {
    const res = await servedDuring(`${dialect} export`, () => fetch(`${app.url}${base}/${from}/export?database_type=${dialect}`, { headers: auth }));
    t.equal(res.status, 200);
    t.match(res.headers.get("content-type"), /^application\/sql/);
    t.equal((await res.text()).match(/^CREATE TABLE /gm)?.length, tables, `${dialect}: every table exported`);
  }
  const answer = await servedDuring("compare", () =>
    fetch(`${app.url}${base}/compare`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify({ schema_id_1: from, schema_id_2: to }) }),
  );
  const res = { status: answer.status, body: (await answer.json()) as { database_type: string; differences: { removed_tables: string[]; modified_tables: Record<string, { added_columns: string[] }> }; migration_sql: string } };
  t.equal(res.status, 200);
  t.equal(res.body.database_type, "PostgreSQL");
  t.equal(res.body.differences.removed_tables.length, Math.ceil((tables - 5) / 13));
  t.same(res.body.differences.modified_tables.t_7?.added_columns, ["note"]);
  t.match(res.body.migration_sql, /ALTER TABLE "t_7" ADD COLUMN "note" text/);
});
