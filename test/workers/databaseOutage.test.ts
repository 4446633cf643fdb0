/**
 * A worker process through a database outage (connections ended, new ones refused, as a
 * restart or a fail-over makes it) that falls while a job runs, so the job's finish and its
 * release meet it: the process must not die, and the job and the ones after it must run.
 */
import { setTimeout as sleep } from "node:timers/promises";
import t from "tap";
import { enqueue } from "../../shared/jobs/enqueue.ts";
import { findJob } from "../../shared/jobs/records.ts";
import { freshDatabase } from "../support/db.ts";
import { startDbProxy } from "../support/dbProxy.ts";
import { buildUser } from "../support/factories.ts";
import { spawnReady } from "../support/processes.ts";
import { sleepKind } from "../support/testTasks.ts";
import { until } from "../support/wait.ts";

t.test("a worker through a database outage", async (t) => {
  const db = await freshDatabase(t);
  const proxy = await startDbProxy(t);
  const worker = await spawnReady(t, "test/support/workerProcess.ts", { DATABASE_URL: proxy.url(db.name) });
  const user = await buildUser(db.pool);
  const job = await db.pool.transaction((tx) => enqueue(tx, sleepKind, { firstAttemptMs: 1500, laterAttemptMs: 10 }, { userId: user.id }));
  await until(async () => (await findJob(db.pool, job.id))?.status === "running", { timeoutMs: 30_000, message: "the job started" });
  await proxy.cut();
  await sleep(4000);
  await proxy.restore();
  const started = Date.now();
  const done = await until(async () => {
    const row = await findJob(db.pool, job.id).catch(() => undefined);
    return row && row.status !== "running" && row.status !== "queued" ? row : undefined;
  }, { timeoutMs: 90_000, message: `the job ended: worker output:\n${worker.output().slice(-3000)}` });
  t.equal(done.status, "succeeded", "the job that met the outage ends");
  t.comment(`ended ${Date.now() - started} ms after the database came back`);
  const next = await db.pool.transaction((tx) => enqueue(tx, sleepKind, { firstAttemptMs: 10, laterAttemptMs: 10 }, { userId: user.id }));
  const after = await until(async () => {
    const row = await findJob(db.pool, next.id);
    return row?.status === "succeeded" ? row : undefined;
  }, { timeoutMs: 60_000, message: `a job enqueued after the outage ran: worker output:\n${worker.output().slice(-3000)}` });
  t.ok(after, "a job enqueued after the outage runs");
  t.equal(worker.process.exitCode, null, "in the same worker process");
});
