/**
 * Waiting for a job (shared/jobs/await.ts) on a real LISTEN connection: woken by
 * `JobCompleted`, answered at once for a finished job, the latest row when the wait runs out,
 * and woken by a LISTEN reconnect when the completion's notification was lost meanwhile.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { awaitJob } from "../../../shared/jobs/await.ts";
import { enqueue } from "../../../shared/jobs/enqueue.ts";
import { jobChannel } from "../../../shared/jobs/events.ts";
import { finishSucceeded } from "../../../shared/jobs/finish.ts";
import { defineJobKind } from "../../../shared/jobs/kind.ts";
import { markFailed, markRunning } from "../../../shared/jobs/records.ts";
import { jobsWorld } from "../../support/jobsWorld.ts";
import { until } from "../../support/wait.ts";

const echo = defineJobKind("test__echo", z.object({ value: z.unknown() }), { maxAttempts: 1 });
/** Longer than any test runs: these waits end by being woken, never by their timeout. */
const FOREVER_MS = 3_600_000;

/** `promise` with a flag telling whether it has settled yet. */
function watched<T>(promise: Promise<T>) {
  const state: { settled: boolean; value?: T; error?: unknown } = { settled: false };
  promise.then(
    (value) => Object.assign(state, { settled: true, value }),
    (error: unknown) => Object.assign(state, { settled: true, error }),
  );
  return state;
}

t.test("awaiting a job", async (t) => {
  const { db, hub, user } = await jobsWorld(t);
  const { pool } = db;
  const fresh = () => pool.transaction((tx) => enqueue(tx, echo, { value: 1 }, { userId: user.id }));
  /** Reconnect callbacks registered before any wait (the hub's own, if any). */
  const reconnectHandlers = hub.handlerCount("none").reconnect;
  /** Ends the LISTEN connection, as a network failure would; the listener reconnects. */
  const dropListener = () =>
    pool.query(sql.type(z.object({}))`
      select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'schemaforge-listener' and datname = current_database()`);

  t.test("JobCompleted wakes the waiter, which answers with the finished record", async (t) => {
    const job = await fresh();
    const waiting = watched(awaitJob(pool, hub, job.id, FOREVER_MS));
    const running = (await markRunning(pool, job.id, 1))!;
    await finishSucceeded(pool, running, { done: true });
    await until(() => waiting.settled, { timeoutMs: 60_000, message: "the waiter to wake" });
    t.match(waiting.value, { id: job.id, status: "succeeded", result: { done: true } });
    t.same(hub.handlerCount(jobChannel(job.id)), { channel: 0, reconnect: reconnectHandlers }, "the finished wait left no handler behind");
  });

  t.test("a reconnect while the job still runs does not end the wait; the completion does", async (t) => {
    const job = await fresh();
    const waiting = watched(awaitJob(pool, hub, job.id, FOREVER_MS));
    const running = (await markRunning(pool, job.id, 1))!;
    t.same(hub.handlerCount(jobChannel(job.id)), { channel: 1, reconnect: reconnectHandlers + 1 }, "the waiter listens on the job's channel and for reconnects");
    const reconnected = new Promise<void>((resolve) => hub.onReconnect(() => resolve()));
    await dropListener();
    await reconnected;
    // The waiter reads the record again after the reconnect and goes back to sleep. The pause
    // gives a wrongly ended wait time to show; on a slow machine it can only miss one, never fail.
    await new Promise((resolve) => setTimeout(resolve, 200));
    t.notOk(waiting.settled, "still waiting: the job is running");
    await finishSucceeded(pool, running, { done: 2 });
    await until(() => waiting.settled, { timeoutMs: 60_000, message: "the waiter to wake" });
    t.match(waiting.value, { id: job.id, status: "succeeded", result: { done: 2 } });
  });

  t.test("a job already finished is answered without waiting", async (t) => {
    const job = await fresh();
    await markFailed(pool, job.id, { message: "no", code: "c", status: 422 });
    const row = await awaitJob(pool, hub, job.id, FOREVER_MS);
    t.match(row, { status: "failed", error: "no" });
  });

  t.test("when the wait runs out, the record as it is then (read again, not the first read)", async (t) => {
    const job = await fresh();
    const waiting = awaitJob(pool, hub, job.id, 1500);
    await markRunning(pool, job.id, 1);
    t.match(await waiting, { id: job.id, status: "running", attempts: 1 });
  });

  t.test("a job that does not exist is an error", async (t) => {
    await t.rejects(awaitJob(pool, hub, 999_999_999, FOREVER_MS), { message: "Job 999999999 does not exist" });
  });

  t.test("a LISTEN reconnect wakes the waiter: a completion notified while disconnected is found by reading again", async (t) => {
    const job = await fresh();
    const waiting = watched(awaitJob(pool, hub, job.id, FOREVER_MS));
    // Finished without a notification, as if its NOTIFY had been sent while the listener was away.
    await pool.query(sql.type(z.object({}))`update jobs set status = 'succeeded', result = '"silent"', finished_at = now() where id = ${job.id}`);
    const reconnected = new Promise<void>((resolve) => hub.onReconnect(() => resolve()));
    await dropListener();
    await reconnected;
    await until(() => waiting.settled, { timeoutMs: 60_000, message: "the waiter to wake after the reconnect" });
    t.match(waiting.value, { id: job.id, status: "succeeded", result: "silent" });
  });
});
