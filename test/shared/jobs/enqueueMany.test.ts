/**
 * Bulk enqueueing against a real database and a real worker: records and graphile-worker
 * jobs written together, in payload order, all or nothing, and run like single jobs.
 */
import pg from "pg";
import t from "tap";
import { z } from "zod";
import { createLogger } from "../../../shared/logger.ts";
import { sql } from "../../../shared/db/pool.ts";
import { enqueueMany, maxBulkJobs } from "../../../shared/jobs/enqueueMany.ts";
import { JOB_CONSOLE_WATCH_KEY } from "../../../shared/jobs/consoleWatch.ts";
import { startWorker } from "../../../workers/index.ts";
import { testConfig } from "../../support/app.ts";
import { freshDatabase } from "../../support/db.ts";
import { buildProject, buildUser } from "../../support/factories.ts";
import { echoKind, testTasks } from "../../support/testTasks.ts";
import { until } from "../../support/wait.ts";

const recordRow = z.object({ id: z.number(), kind: z.string(), status: z.string(), user_id: z.number().nullable(), project_id: z.number().nullable(), payload: z.unknown() });
const workerRow = z.object({ key: z.string().nullable(), task_identifier: z.string(), payload: z.unknown(), max_attempts: z.number() });
const countRow = z.object({ count: z.number() });

t.test("enqueueMany", async (t) => {
  const db = await freshDatabase(t);
  const user = await buildUser(db.pool);
  const projectId = await buildProject(db.pool, user.id);
  const countJobs = async () => ({
    records: await db.pool.oneFirst(sql.type(countRow)`select count(*)::int as count from jobs`),
    queued: await db.pool.oneFirst(sql.type(countRow)`select count(*)::int as count from graphile_worker.jobs`),
  });

  t.test("writes one record and one worker job per payload, in payload order", async (t) => {
    const ids = await db.pool.transaction((tx) => enqueueMany(tx, echoKind, [{ value: "a" }, { value: "b" }, { value: "c" }], { userId: user.id, projectId }));
    t.equal(ids.length, 3);
    const records = await db.pool.any(sql.type(recordRow)`select id, kind, status, user_id, project_id, payload from jobs where id = any(${sql.array([...ids], "int8")}) order by id`);
    t.same(records.map((r) => r.id), ids, "the ids answered are the records'");
    t.same(records.map((r) => r.payload), [{ value: "a" }, { value: "b" }, { value: "c" }], "ids follow the payloads' order");
    for (const r of records) t.match(r, { kind: "test__echo", status: "queued", user_id: user.id, project_id: projectId });
    const queued = await db.pool.any(sql.type(workerRow)`
      select j.key, t.identifier as task_identifier, j.payload, j.max_attempts
      from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
      where j.key = any(${sql.array(ids.map((id) => `job:${id}`), "text")}) order by j.id`);
    t.same(
      queued.map((q) => q.payload),
      records.map((r) => ({ job_id: r.id, payload: r.payload })),
      "each worker job carries the envelope of its record",
    );
    for (const q of queued) t.match(q, { task_identifier: "test__echo", max_attempts: echoKind.maxAttempts });
  });

  t.test("nothing is written when the transaction rolls back", async (t) => {
    const before = await countJobs();
    await t.rejects(
      db.pool.transaction(async (tx) => {
        await enqueueMany(tx, echoKind, [{ value: 1 }, { value: 2 }]);
        throw new Error("roll back");
      }),
      /roll back/,
    );
    t.same(await countJobs(), before);
  });

  t.test("a payload that does not match the kind is refused before anything is written", async (t) => {
    const before = await countJobs();
    // @ts-expect-error -- a wrong payload, as an untyped caller could pass
    await t.rejects(enqueueMany(db.pool, echoKind, [{ value: 1 }, "not an object"]), { name: "ZodError" });
    t.same(await countJobs(), before);
  });

  t.test("no payloads, no statement; too many, refused", async (t) => {
    const before = await countJobs();
    t.same(await enqueueMany(db.pool, echoKind, []), []);
    await t.rejects(enqueueMany(db.pool, echoKind, Array.from({ length: maxBulkJobs + 1 }, () => ({ value: 0 }))), new RangeError(`enqueueMany takes at most ${maxBulkJobs} jobs, got ${maxBulkJobs + 1}.`));
    t.same(await countJobs(), before);
    // Exactly the limit passes the limit check: those payloads then fail the kind's own check.
    const atLimit = enqueueMany(db.pool, echoKind, Array.from({ length: maxBulkJobs }, () => "not an object" as never));
    await t.rejects(atLimit, { name: "ZodError" }, "past the limit check, refused by the payload check");
    t.same(await countJobs(), before);
  });

  t.test("the operator console hears one JobChanged per statement, with the count, not one per job", async (t) => {
    const listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    t.teardown(() => listener.end());
    const heard: { event: string; channel: string; data: { id: number; kind: string; status: string; count: number } }[] = [];
    listener.on("notification", (n) => {
      const event = JSON.parse(n.payload ?? "null") as (typeof heard)[number];
      if (event.channel === "private-admin.jobs") heard.push(event);
    });
    await listener.query("listen realtime");
    // Watching as a web process with a console subscriber does (0130): without a watcher the
    // triggers notify nothing.
    await listener.query("select pg_advisory_lock_shared($1::bigint)", [JOB_CONSOLE_WATCH_KEY.toString()]);
    const ids = await enqueueMany(db.pool, echoKind, Array.from({ length: 50 }, (_, i) => ({ value: i })));
    await until(() => heard.length >= 1, { message: "the JobChanged of the batch" });
    // A later single-job statement: its event arriving proves nothing else was pending.
    const [single] = await enqueueMany(db.pool, echoKind, [{ value: "single" }]);
    await until(() => heard.some((e) => e.data.id === single), { message: "the JobChanged of the single job" });
    t.same(heard, [
      { channel: "private-admin.jobs", event: "JobChanged", data: { id: ids[0], kind: "test__echo", status: "queued", count: 50 } },
      { channel: "private-admin.jobs", event: "JobChanged", data: { id: single, kind: "test__echo", status: "queued", count: 1 } },
    ]);
  });

  t.test("a worker runs every job of a batch to success", async (t) => {
    const log = createLogger("silent");
    const worker = await startWorker({ config: testConfig(db.url), pool: db.pool, log }, { databaseUrl: db.url, extraTasks: testTasks, crontab: "" });
    t.teardown(() => worker.stop());
    const ids = await enqueueMany(
      db.pool,
      echoKind,
      Array.from({ length: 200 }, (_, i) => ({ value: i })),
    );
    await until(
      async () => (await db.pool.oneFirst(sql.type(countRow)`select count(*)::int as count from jobs where id = any(${sql.array([...ids], "int8")}) and status = 'succeeded'`)) === ids.length,
      { timeoutMs: 60_000, message: "every job of the batch succeeds" },
    );
    const results = await db.pool.any(sql.type(z.object({ result: z.unknown() }))`select result from jobs where id = any(${sql.array([...ids], "int8")}) order by id`);
    t.same(results.map((r) => r.result), ids.map((_, i) => ({ echoed: i })));
  });
});
