/**
 * Waiting for a test worker to run out of work: no job record queued or running, and no
 * graphile-worker job due, which also covers the jobs added without a record (the webhook
 * dispatcher that a `CodeGenerated` outbox event queues from a trigger, migration 0008, and
 * marks the event processed when it runs). Jobs scheduled for later (a retry's back-off) do
 * not count, so a failing job does not hold the wait for its next attempt, nor do jobs that
 * failed for good (graphile-worker keeps them with their attempts spent).
 */
import { z } from "zod";
import { sql, type DatabasePool } from "../../shared/db/pool.ts";
import { until } from "./wait.ts";

const pending = z.object({ records: z.number(), due: z.number() });

/** Resolves once the worker has nothing left to do now (guarded at 120 s). */
export async function workerIdle(pool: DatabasePool): Promise<void> {
  await until(
    async () => {
      const { records, due } = await pool.one(sql.type(pending)`
        select (select count(*)::int from jobs where status in ('queued', 'running')) as records,
          (select count(*)::int from graphile_worker.jobs where locked_at is not null or (run_at <= now() and attempts < max_attempts)) as due`);
      return records === 0 && due === 0;
    },
    { timeoutMs: 120_000, message: "the worker to finish its jobs" },
  );
}
