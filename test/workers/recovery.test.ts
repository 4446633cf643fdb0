import t from "tap";
import { enqueue } from "../../shared/jobs/enqueue.ts";
import { findJob, type JobRow } from "../../shared/jobs/records.ts";
import { freshDatabase } from "../support/db.ts";
import { buildUser } from "../support/factories.ts";
import { spawnReady } from "../support/processes.ts";
import { crashKind, sleepKind } from "../support/testTasks.ts";
import { until } from "../support/wait.ts";
import type { DatabasePool } from "../../shared/db/pool.ts";

async function waitFor(pool: DatabasePool, id: number, accept: (row: JobRow) => boolean, timeoutMs: number): Promise<JobRow> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = await findJob(pool, id);
    if (row && accept(row)) return row;
    if (Date.now() > deadline) throw new Error(`job ${id} still ${row?.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// With the production defaults (5 s heartbeat, 15 s until a silent worker counts as dead,
// 2 s poll), so this also proves the 30 s bound the service promises.
const productionTiming = { WORKER_HEARTBEAT_MS: "5000", WORKER_STALE_AFTER_MS: "15000", WORKER_POLL_INTERVAL_MS: "2000" };

t.test("a worker killed with SIGKILL mid-job: another worker retries it within 30 s", async (t) => {
  const db = await freshDatabase(t);
  const user = await buildUser(db.pool);
  const first = await spawnReady(t, "test/support/workerProcess.ts", { DATABASE_URL: db.url, ...productionTiming });
  const job = await db.pool.transaction((tx) => enqueue(tx, sleepKind, { firstAttemptMs: 60_000, laterAttemptMs: 50 }, { userId: user.id }));
  const running = await waitFor(db.pool, job.id, (r) => r.status === "running", 15_000);
  t.equal(running.attempts, 1);

  await first.kill("SIGKILL");
  const killedAt = Date.now();
  const second = await spawnReady(t, "test/support/workerProcess.ts", { DATABASE_URL: db.url, ...productionTiming });
  const done = await waitFor(db.pool, job.id, (r) => r.status === "succeeded" || r.status === "failed", 90_000);
  const recoveredIn = Date.now() - killedAt;
  t.equal(done.status, "succeeded", "the jobs record ends succeeded");
  t.equal(done.attempts, 2, "the killed attempt counts as one");
  t.same(done.result, { attempt: 2, pid: second.pid }, "completed by the other worker");
  t.comment(`recovered ${recoveredIn} ms after the kill`);
});

t.test("SIGTERM lets a worker finish its running job before it exits", async (t) => {
  const db = await freshDatabase(t);
  const user = await buildUser(db.pool);
  const worker = await spawnReady(t, "test/support/workerProcess.ts", { DATABASE_URL: db.url });
  const job = await db.pool.transaction((tx) => enqueue(tx, sleepKind, { firstAttemptMs: 800, laterAttemptMs: 800 }, { userId: user.id }));
  await waitFor(db.pool, job.id, (r) => r.status === "running", 15_000);
  await worker.kill("SIGTERM");
  t.equal(worker.process.exitCode, 0, "clean exit");
  const row = await findJob(db.pool, job.id);
  t.equal(row?.status, "succeeded", "the running job finished during the graceful stop");
  t.equal(row?.attempts, 1);
});

t.test("a job that kills its worker on every attempt ends failed once its attempts are used up", async (t) => {
  const db = await freshDatabase(t);
  const user = await buildUser(db.pool);
  const dies = async () => {
    const worker = await spawnReady(t, "test/support/workerProcess.ts", { DATABASE_URL: db.url });
    return worker;
  };
  const first = await dies();
  const job = await db.pool.transaction((tx) => enqueue(tx, crashKind, {}, { userId: user.id }));
  await until(() => first.process.signalCode === "SIGKILL", { timeoutMs: 60_000, message: "the first attempt to kill its worker" });
  const second = await dies();
  await until(() => second.process.signalCode === "SIGKILL", { timeoutMs: 120_000, message: "the second attempt to kill its worker" });
  // A third worker finds the job's attempts used up: the record must not stay running.
  await dies();
  const done = await waitFor(db.pool, job.id, (r) => r.status !== "running" && r.status !== "queued", 120_000);
  t.match(done, { status: "failed", attempts: 2, error_code: "worker_lost" });
});
