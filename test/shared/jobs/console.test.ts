/**
 * The operators' reads of the queue (shared/jobs/console.ts): figures per kind, the last
 * hour by five minutes, the slowest and failed jobs, live workers, the filtered list, and
 * retrying a failed job under its own id.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { jobStats, listJobs, liveWorkers, retryJob } from "../../../shared/jobs/console.ts";
import { enqueue } from "../../../shared/jobs/enqueue.ts";
import { defineJobKind } from "../../../shared/jobs/kind.ts";
import { findJob, markFailed, markRunning, markSucceeded } from "../../../shared/jobs/records.ts";
import { jobsWorld } from "../../support/jobsWorld.ts";

const alpha = defineJobKind("test__alpha", z.object({ n: z.number() }), { maxAttempts: 3 });
const beta = defineJobKind("test__beta", z.object({ n: z.number() }), { maxAttempts: 2 });
const ignored = z.object({});

t.test("job console", async (t) => {
  const { db, user } = await jobsWorld(t);
  const { pool } = db;
  const add = (kind: typeof alpha, n: number) => pool.transaction((tx) => enqueue(tx, kind, { n }, { userId: user.id }));
  /** Moves a job's times `minutesAgo` back and gives it a run of `seconds`. */
  const backdate = (id: number, minutesAgo: number, seconds: number) =>
    pool.query(sql.type(ignored)`
      update jobs set finished_at = now() - make_interval(mins => ${minutesAgo}),
        started_at = now() - make_interval(mins => ${minutesAgo}) - make_interval(secs => ${seconds}) where id = ${id}`);

  // alpha: 2 queued, 1 running, 2 succeeded (one 2 min ago, 30 s; one 12 min ago, 90 s), 1 failed 2 min ago (5 s)
  // beta: 1 queued, 1 succeeded 90 min ago (outside the hour)
  const queuedA = [await add(alpha, 1), await add(alpha, 2)];
  const runningA = await add(alpha, 3);
  await markRunning(pool, runningA.id, 1);
  const done = [await add(alpha, 4), await add(alpha, 5)];
  for (const job of done) {
    await markRunning(pool, job.id, 1);
    await markSucceeded(pool, job.id, { n: job.id });
  }
  await backdate(done[0]!.id, 2, 30);
  await backdate(done[1]!.id, 12, 90);
  const failedA = await add(alpha, 6);
  await markRunning(pool, failedA.id, 1);
  await markFailed(pool, failedA.id, { message: "broke", code: "c", status: 500 });
  await backdate(failedA.id, 2, 5);
  const queuedB = await add(beta, 1);
  const oldB = await add(beta, 2);
  await markRunning(pool, oldB.id, 1);
  await markSucceeded(pool, oldB.id, null);
  await backdate(oldB.id, 90, 600);
  await pool.query(sql.type(ignored)`
    insert into worker_processes (id, hostname, pid, started_at, beat_at) values
      ('live-1', 'host-a', 11, now() - interval '1 hour', now()),
      ('live-2', 'host-b', 12, now() - interval '2 hours', now() - interval '5 minutes'),
      ('stale', 'host-c', 13, now() - interval '3 hours', now() - interval '1 hour')`);
  /** live-1 beats now; the windows below (1 and 10 minutes) sit well between the three beats. */
  const beat = () => pool.query(sql.type(ignored)`update worker_processes set beat_at = now() where id = 'live-1'`);

  t.test("figures: depth and running per kind, twelve buckets, totals and the failure rate, slowest and failed", async (t) => {
    await beat();
    const stats = await jobStats(pool, 600_000);
    t.same(stats.kinds, [
      { kind: "test__alpha", queued: 2, running: 1 },
      { kind: "test__beta", queued: 1, running: 0 },
    ]);
    t.equal(stats.throughput.length, 12);
    const buckets = stats.throughput.map((b) => b.at.getTime());
    t.same(buckets, [...buckets].sort((a, b) => a - b), "oldest first");
    t.equal(buckets[1]! - buckets[0]!, 5 * 60_000);
    t.ok(buckets[11]! <= Date.now() && buckets[11]! > Date.now() - 5 * 60_000, "the last bucket holds now");
    t.equal(stats.throughput.reduce((n, b) => n + b.succeeded, 0), 2);
    t.equal(stats.throughput.reduce((n, b) => n + b.failed, 0), 1);
    t.same(stats.totals, { queued: 3, running: 1, finished_last_hour: 3, failed_last_hour: 1, failure_rate: 1 / 3 });
    t.same(stats.slowest.map((j) => j.id), [done[1]!.id, done[0]!.id, failedA.id], "the hour's finished jobs, slowest first");
    t.ok(Math.abs(stats.slowest[0]!.duration_ms - 90_000) < 1000, `duration in ms (${stats.slowest[0]!.duration_ms})`);
    t.same(stats.failed.map((j) => j.id), [failedA.id]);
    t.same(stats.workers.map((w) => w.id), ["live-2", "live-1"], "live workers, oldest start first");
  });

  t.test("no finished jobs: a failure rate of 0, not NaN", async (t) => {
    const empty = await jobsWorld(t);
    const stats = await jobStats(empty.db.pool, 30_000);
    t.same(stats.totals, { queued: 0, running: 0, finished_last_hour: 0, failed_last_hour: 0, failure_rate: 0 });
    t.same(stats.kinds, []);
  });

  t.test("live workers: those that beat within the window", async (t) => {
    await beat();
    t.same((await liveWorkers(pool, 600_000)).map((w) => w.id), ["live-2", "live-1"]);
    const recent = await liveWorkers(pool, 60_000);
    t.same(recent.map((w) => w.id), ["live-1"]);
    t.match(recent[0], { hostname: "host-a", pid: 11 });
  });

  t.test("the list: newest first, by status and kind, paged, with the total", async (t) => {
    const all = await listJobs(pool, { limit: 100, offset: 0 });
    t.equal(all.total, 8);
    const ids = all.rows.map((r) => r.id);
    t.same(ids, [...ids].sort((a, b) => b - a));
    const queued = await listJobs(pool, { status: "queued", limit: 100, offset: 0 });
    t.same(queued.rows.map((r) => r.id).sort(), [...queuedA.map((j) => j.id), queuedB.id].sort());
    t.equal(queued.total, 3);
    const betas = await listJobs(pool, { kind: "test__beta", limit: 100, offset: 0 });
    t.same(betas.rows.map((r) => r.id), [oldB.id, queuedB.id]);
    const both = await listJobs(pool, { kind: "test__alpha", status: "queued", limit: 1, offset: 1 });
    t.same(both.rows.map((r) => r.id), [queuedA[0]!.id], "second page of one");
    t.equal(both.total, 2);
  });

  t.test("retry: a failed job is queued again under its own id and key; anything else is refused", async (t) => {
    const job = await add(beta, 9);
    await markRunning(pool, job.id, 2);
    await markFailed(pool, job.id, { message: "gone", code: "c", status: 500 });
    const outcome = await pool.transaction((tx) => retryJob(tx, job.id));
    t.ok("job" in outcome);
    if (!("job" in outcome)) return;
    t.match(outcome.job, { id: job.id, status: "queued", attempts: 0, progress: 0, started_at: null, finished_at: null, error: "gone" });
    const queued = await pool.one(sql.type(z.object({ identifier: z.string(), payload: z.unknown(), max_attempts: z.number() }))`
      select k.identifier, j.payload, j.max_attempts from graphile_worker._private_jobs j join graphile_worker._private_tasks k on k.id = j.task_id
      where j.key = ${`job:${job.id}`}`);
    t.same(queued, { identifier: "test__beta", payload: { job_id: job.id, payload: { n: 9 } }, max_attempts: 2 });
    t.same(await pool.transaction((tx) => retryJob(tx, job.id)), { refusal: "not_failed" });
    t.same(await pool.transaction((tx) => retryJob(tx, 999_999_999)), { refusal: "not_found" });
    const bare = await add(beta, 10);
    await markFailed(pool, bare.id, { message: "m", code: "c", status: 500 });
    await pool.query(sql.type(ignored)`update jobs set payload = null where id = ${bare.id}`);
    t.same(await pool.transaction((tx) => retryJob(tx, bare.id)), { refusal: "no_payload" });
    t.equal((await findJob(pool, bare.id))?.status, "failed");
  });
});
