/**
 * Worker processes that die or stop mid-job: a job whose worker keeps killing itself ends
 * failed (`worker_lost`) once its attempts are used up; a worker killed with SIGKILL mid-job
 * has its job retried by another worker process (the heartbeat sweep unlocks it); SIGTERM
 * lets a worker finish its running job before it exits. The timing is the tests' (fast
 * heartbeats: see support/app.ts); the time recovery took is reported, not judged.
 *
 * The subtests share one database and hand the worker process that is still alive on to the
 * next (one is spawned only when none is left); each enqueues its own user's jobs.
 */
import t, { type Test } from "tap";
import { enqueue } from "../../shared/jobs/enqueue.ts";
import { findJob, type JobRow } from "../../shared/jobs/records.ts";
import { freshDatabase, type TestDatabase } from "../support/db.ts";
import { buildUser } from "../support/factories.ts";
import { spawnReady, type Child } from "../support/processes.ts";
import { crashKind, sleepKind } from "../support/testTasks.ts";
import { until } from "../support/wait.ts";

const db: TestDatabase = await freshDatabase(t);

/** The worker process still running, or a new one when none is (its teardown is the file's). */
let current: Child | undefined;
async function liveWorker(): Promise<Child> {
  if (!current || current.process.exitCode !== null || current.process.signalCode !== null) {
    current = await spawnReady(t, "test/support/workerProcess.ts", { DATABASE_URL: db.url });
  }
  return current;
}

const jobFor = (id: number, accept: (row: JobRow) => boolean, what: string, timeoutMs = 60_000) =>
  until(async () => {
    const row = await findJob(db.pool, id);
    return row && accept(row) ? row : undefined;
  }, { timeoutMs, message: `job ${id} ${what}` });

const killedBy = (t: Test, worker: Child, what: string) =>
  until(() => worker.process.signalCode === "SIGKILL", { timeoutMs: 120_000, message: what }).then(() => t.pass(what));

t.test("a job that kills its worker on every attempt ends failed once its attempts are used up", async (t) => {
  const user = await buildUser(db.pool);
  const first = await liveWorker();
  const job = await db.pool.transaction((tx) => enqueue(tx, crashKind, {}, { userId: user.id }));
  await killedBy(t, first, "the first attempt killed its worker");
  // The next worker's sweep unlocks the job of the silent one and runs the second attempt.
  const second = await liveWorker();
  t.not(second.pid, first.pid, "in another worker process");
  await killedBy(t, second, "the second attempt killed the next worker");
  // A third worker finds the job's attempts used up: the record must not stay running.
  await liveWorker();
  const done = await jobFor(job.id, (r) => r.status !== "running" && r.status !== "queued", "to end");
  t.match(done, { status: "failed", attempts: 2, error_code: "worker_lost" });
});

t.test("a worker killed with SIGKILL mid-job: another worker retries it", async (t) => {
  const user = await buildUser(db.pool);
  const first = await liveWorker();
  const job = await db.pool.transaction((tx) => enqueue(tx, sleepKind, { firstAttemptMs: 60_000, laterAttemptMs: 50 }, { userId: user.id }));
  const running = await jobFor(job.id, (r) => r.status === "running", "to run");
  t.equal(running.attempts, 1);

  await first.kill("SIGKILL");
  const killedAt = Date.now();
  const second = await liveWorker();
  const done = await jobFor(job.id, (r) => r.status === "succeeded" || r.status === "failed", "to end");
  t.equal(done.status, "succeeded", "the jobs record ends succeeded");
  t.equal(done.attempts, 2, "the killed attempt counts as one");
  t.same(done.result, { attempt: 2, pid: second.pid }, "completed by the other worker");
  t.comment(`recovered ${Date.now() - killedAt} ms after the kill`);
});

t.test("SIGTERM lets a worker finish its running job before it exits", async (t) => {
  const user = await buildUser(db.pool);
  const worker = await liveWorker();
  const job = await db.pool.transaction((tx) => enqueue(tx, sleepKind, { firstAttemptMs: 800, laterAttemptMs: 800 }, { userId: user.id }));
  await jobFor(job.id, (r) => r.status === "running", "to run");
  await worker.kill("SIGTERM");
  t.equal(worker.process.exitCode, 0, "clean exit");
  const row = await findJob(db.pool, job.id);
  t.equal(row?.status, "succeeded", "the running job finished during the graceful stop");
  t.equal(row?.attempts, 1);
  t.same(row?.result, { attempt: 1, pid: worker.pid }, "in the stopping worker");
});
