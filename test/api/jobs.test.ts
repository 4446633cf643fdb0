import t from "tap";
import { z } from "zod";
import { sql } from "../../shared/db/pool.ts";
import { enqueue } from "../../shared/jobs/enqueue.ts";
import { findJob } from "../../shared/jobs/records.ts";
import { startTestApp } from "../support/app.ts";
import { buildUserWithToken } from "../support/factories.ts";
import { client } from "../support/http.ts";
import { connectPusher } from "../support/pusher.ts";
import { testRoutes } from "../support/testRoutes.ts";
import { until } from "../support/wait.ts";
import { echoKind, flakyKind, LEAKY_MESSAGE, leakyKind, sleepKind, testTasks } from "../support/testTasks.ts";

const count = z.object({ count: z.number() });

t.test("jobs", async (t) => {
  const app = await startTestApp(t, { worker: true, extraTasks: testTasks, extraRoutes: testRoutes });
  const owner = await buildUserWithToken(app.pool);
  const stranger = await buildUserWithToken(app.pool);
  const admin = await buildUserWithToken(app.pool, { roles: ["admin"] });
  const api = client(app.url, owner.token);

  t.test("an awaited job answers with its result", async (t) => {
    const res = await api.post("/api/test/jobs/echo", { payload: { value: { hello: "world" } } });
    t.equal(res.status, 200);
    t.same(res.body, { result: { echoed: { hello: "world" } } });
  });

  t.test("Prefer: respond-async answers 202 with Location, and the job can be followed", async (t) => {
    const res = await api.post("/api/test/jobs/echo", { payload: { value: 42 } }, { headers: { prefer: "respond-async" } });
    t.equal(res.status, 202);
    t.equal(res.headers.get("preference-applied"), "respond-async");
    const location = res.headers.get("location");
    t.match(location, /^\/api\/jobs\/\d+$/);
    t.equal(res.body.job.status, "queued");
    let job;
    for (let i = 0; i < 100; i += 1) {
      job = (await api.get(location!)).body.job;
      if (job.status === "succeeded") break;
      await new Promise((r) => setTimeout(r, 50));
    }
    t.equal(job.status, "succeeded");
    t.same(job.result, { echoed: 42 });
    t.equal(job.progress, 100);
    t.equal(job.attempts, 1);
    t.ok(job.started_at && job.finished_at);
  });

  t.test("a job outliving SYNC_WAIT_MS answers 202", async (t) => {
    const quick = await startTestApp(t, { db: app.db, extraRoutes: testRoutes, env: { SYNC_WAIT_MS: "200" } });
    const res = await client(quick.url, owner.token).post("/api/test/jobs/sleep", { payload: { firstAttemptMs: 1500, laterAttemptMs: 0 } });
    t.equal(res.status, 202);
    t.match(res.headers.get("location"), /^\/api\/jobs\/\d+$/);
    t.ok(["queued", "running"].includes(res.body.job.status));
  });

  t.test("progress is recorded and the job ends at 100", async (t) => {
    const res = await api.post("/api/test/jobs/progress", { payload: { steps: 3 } });
    t.equal(res.status, 200);
    const row = await app.pool.one(sql.type(z.object({ id: z.number(), progress: z.number(), progress_message: z.string().nullable() }))`
      select id, progress, progress_message from jobs where kind = 'test__progress' order by id desc limit 1`);
    t.equal(row.progress, 100);
    t.equal(row.progress_message, "step 3");
  });

  t.test("transient failures are retried with back-off until success", async (t) => {
    const job = await app.pool.transaction((tx) => enqueue(tx, flakyKind, { failTimes: 1 }, { userId: owner.user.id }));
    // graphile-worker backs off exp(1) ≈ 2.7 s before the second attempt
    const row = await until(async () => {
      const found = await findJob(app.pool, job.id);
      return found && ["succeeded", "failed", "cancelled"].includes(found.status) ? found : null;
    }, { timeoutMs: 60_000, message: "the flaky job to finish" });
    t.equal(row?.status, "succeeded");
    t.equal(row?.attempts, 2);
    t.same(row?.result, { attempt: 2 });
  });

  t.test("a permanent error fails at once, and the awaiting request gets its 422", async (t) => {
    const res = await api.post("/api/test/jobs/invalid", { payload: {} });
    t.equal(res.status, 422);
    t.same(res.body, {
      message: "The SQL could not be parsed at line 3, column 7.",
      code: "validation_failed",
      errors: { sql_text: ["The SQL could not be parsed at line 3, column 7."] },
    });
    const row = await app.pool.one(sql.type(z.object({ attempts: z.number(), status: z.string() }))`
      select attempts, status from jobs where kind = 'test__invalid' order by id desc limit 1`);
    t.same(row, { attempts: 1, status: "failed" });
  });

  t.test("a job enqueued in a transaction that rolls back does not exist", async (t) => {
    const counts = sql.type(z.object({ records: z.number(), queued: z.number() }))`
      select (select count(*)::int from jobs) as records,
        -- only this test's job: graphile-worker deletes the rows of finished jobs at its own pace
        (select count(*)::int from graphile_worker._private_jobs where payload->'payload'->>'value' = 'never') as queued`;
    const before = await app.pool.one(counts);
    const res = await api.post("/api/test/rollback");
    t.equal(res.status, 409);
    t.same(await app.pool.one(counts), before, "neither a record nor a worker job");
  });

  t.test("GET /api/jobs/{id} is for the owner and site admins only", async (t) => {
    const job = await app.pool.transaction((tx) => enqueue(tx, echoKind, { value: 1 }, { userId: owner.user.id }));
    t.equal((await api.get(`/api/jobs/${job.id}`)).status, 200);
    const strangerRes = await client(app.url, stranger.token).get(`/api/jobs/${job.id}`);
    t.equal(strangerRes.status, 404, "a stranger cannot even learn that the job exists");
    t.equal((await client(app.url, admin.token).get(`/api/jobs/${job.id}`)).status, 200);
    t.equal((await client(app.url).get(`/api/jobs/${job.id}`)).status, 401);
    t.equal((await api.get(`/api/jobs/999999999`)).status, 404);
    t.equal((await api.get(`/api/jobs/not-a-number`)).status, 404);
  });

  t.test("GET /api/jobs lists the caller's jobs, paginated and filtered", async (t) => {
    // Its own user and jobs: three that succeed and one held back (queued).
    const lister = await buildUserWithToken(app.pool);
    const api = client(app.url, lister.token);
    const ids: number[] = [];
    for (let value = 1; value <= 3; value += 1) ids.push((await app.pool.transaction((tx) => enqueue(tx, echoKind, { value }, { userId: lister.user.id }))).id);
    await app.pool.transaction((tx) => enqueue(tx, echoKind, { value: 4 }, { userId: lister.user.id, runAt: new Date(Date.now() + 3_600_000) }));
    await until(async () => {
      const done = await Promise.all(ids.map((id) => findJob(app.pool, id)));
      return done.every((job) => job?.status === "succeeded");
    }, { message: "three jobs to succeed" });
    const all = await api.get("/api/jobs");
    t.equal(all.body.meta.total, 4, "the caller's four jobs");
    const res = await api.get("/api/jobs?per_page=2&status=succeeded");
    t.equal(res.status, 200);
    t.equal(res.body.data.length, 2);
    t.ok(res.body.data.every((j: { status: string }) => j.status === "succeeded"));
    t.equal(res.body.meta.per_page, 2);
    t.equal(res.body.meta.total, 3, "the held-back job is not among the succeeded");
    t.match(res.body.links.next, /page=2/);
    const bad = await api.get("/api/jobs?per_page=1000&status=weird");
    t.equal(bad.status, 422);
    t.ok(bad.body.errors.per_page && bad.body.errors.status);
    const others = await client(app.url, (await buildUserWithToken(app.pool)).token).get("/api/jobs");
    t.equal(others.body.meta.total, 0, "no one else's jobs");
  });

  t.test("a queued job can be cancelled; a finished one cannot", async (t) => {
    const later = await app.pool.transaction((tx) =>
      enqueue(tx, sleepKind, { firstAttemptMs: 1, laterAttemptMs: 1 }, { userId: owner.user.id, runAt: new Date(Date.now() + 60_000) }),
    );
    const res = await api.post(`/api/jobs/${later.id}/cancel`);
    t.equal(res.status, 200);
    t.equal(res.body.job.status, "cancelled");
    t.equal(await app.pool.oneFirst(sql.type(count)`select count(*)::int as count from graphile_worker.jobs where key = ${`job:${later.id}`}`), 0);
    t.equal((await client(app.url, stranger.token).post(`/api/jobs/${later.id}/cancel`)).status, 404);
    const again = await api.post(`/api/jobs/${later.id}/cancel`);
    t.equal(again.status, 409);
    t.equal(again.body.code, "job_not_cancellable");
  });

  t.test("a request awaiting a job that is then cancelled answers 409 job_cancelled", async (t) => {
    // No worker here, so the job stays queued until it is cancelled.
    const idle = await startTestApp(t, { extraRoutes: testRoutes });
    const waiter = await buildUserWithToken(idle.pool);
    const awaiting = client(idle.url, waiter.token).post("/api/test/jobs/echo", { payload: { value: "never run" } });
    const id = await until(
      () => idle.pool.maybeOneFirst(sql.type(z.object({ id: z.number() }))`select id from jobs where user_id = ${waiter.user.id} and kind = 'test__echo'`),
      { message: "the awaited job to be recorded" },
    );
    const cancelled = await client(idle.url, waiter.token).post(`/api/jobs/${id}/cancel`);
    t.equal(cancelled.status, 200);
    const res = await awaiting;
    t.equal(res.status, 409);
    t.same(res.body, { message: "The job was cancelled before it ran.", code: "job_cancelled" });
    t.equal((await findJob(idle.pool, id))?.status, "cancelled");
    t.equal(await idle.pool.oneFirst(sql.type(count)`select count(*)::int as count from graphile_worker.jobs where key = ${`job:${id}`}`), 0, "its worker job is gone");
  });

  t.test("a running job cannot be cancelled: 409 job_not_cancellable, and it runs to its end", async (t) => {
    // Long enough that the cancel arrives while it runs, even on a loaded machine.
    const job = await app.pool.transaction((tx) => enqueue(tx, sleepKind, { firstAttemptMs: 15_000, laterAttemptMs: 1 }, { userId: owner.user.id }));
    await until(async () => (await findJob(app.pool, job.id))?.status === "running", { timeoutMs: 60_000, message: "the job to start" });
    const res = await api.post(`/api/jobs/${job.id}/cancel`);
    t.equal(res.status, 409);
    t.equal(res.body.code, "job_not_cancellable");
    t.equal((await findJob(app.pool, job.id))?.status, "running", "refused while it ran, not because it had finished");
    const done = await until(async () => {
      const row = await findJob(app.pool, job.id);
      return row && row.status !== "running" ? row : null;
    }, { timeoutMs: 120_000, message: "the job to finish" });
    t.match(done, { status: "succeeded", attempts: 1 });
  });

  t.test("an unexpected error is stored as a generic message: no internals in the record, GET /jobs/{id} or JobCompleted", async (t) => {
    const internals = /ECONNREFUSED|10\.0\.0\.5|5432|password|hunter2/;
    // An awaiting request for another such job, meanwhile (both wait out the retry back-off).
    const awaiting = api.post("/api/test/jobs/leaky", { payload: {} });
    // Starts in a moment, so that the client is subscribed before it ends.
    const job = await app.pool.transaction((tx) => enqueue(tx, leakyKind, {}, { userId: owner.user.id, runAt: new Date(Date.now() + 1000) }));
    const pusher = await connectPusher(t, app.url, app.config.realtime.key, owner.token);
    const channel = await pusher.subscribe(`private-job.${job.id}`);
    const completed = pusher.next(channel, "JobCompleted", 20_000);

    let row = await findJob(app.pool, job.id);
    for (let i = 0; i < 200 && !(row?.attempts === 1 && row.status === "queued" && row.error); i += 1) {
      await new Promise((r) => setTimeout(r, 25));
      row = await findJob(app.pool, job.id);
    }
    t.match(row, { status: "queued", attempts: 1, error_code: "job_failed" }, "the first attempt failed and waits for its retry");
    t.equal(row?.error, "An attempt of the job failed unexpectedly; it will be retried.");
    t.notMatch((await api.get(`/api/jobs/${job.id}`)).text, internals, "nothing of the error while it waits");

    const event = await completed;
    t.equal(event.status, "failed");
    t.equal(event.job.error, "The job failed unexpectedly.");
    t.equal(event.job.error_code, "job_failed");
    t.notMatch(JSON.stringify(event), internals, "JobCompleted carries none of it");
    const read = await api.get(`/api/jobs/${job.id}`);
    t.match(read.body.job, { status: "failed", attempts: 2, error: "The job failed unexpectedly.", error_code: "job_failed", errors: null });
    t.notMatch(read.text, internals, "GET /jobs/{id} carries none of it");
    const stored = await app.pool.one(sql.type(z.object({ error: z.string().nullable(), details: z.string() }))`
      select error, coalesce(error_details::text, '') as details from jobs where id = ${job.id}`);
    t.notMatch(`${stored.error} ${stored.details}`, internals, "nor does the record");
    t.notOk(LEAKY_MESSAGE.includes(stored.error ?? "-"));

    const awaited = await awaiting;
    t.equal(awaited.status, 500, "an awaiting request gets a bare 500");
    t.same(awaited.body, { message: "The background job failed.", code: "job_failed" });
  });

  t.test("a failure written for the user reaches the client with its message and code", async (t) => {
    const res = await api.post("/api/test/jobs/refused", { payload: {} });
    t.equal(res.status, 422);
    t.same(res.body, { message: "The remote host refused the upload: the folder is read-only.", code: "remote_refused" });
    const row = await app.pool.one(sql.type(z.object({ id: z.number(), attempts: z.number() }))`
      select id, attempts from jobs where kind = 'test__refused' order by id desc limit 1`);
    t.equal(row.attempts, 1, "not retried");
    const read = await api.get(`/api/jobs/${row.id}`);
    t.match(read.body.job, { status: "failed", error: "The remote host refused the upload: the folder is read-only.", error_code: "remote_refused" });
  });
});
