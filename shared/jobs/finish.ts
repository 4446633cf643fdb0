/**
 * Finishing a job successfully: the record update and its `JobCompleted` NOTIFY in one
 * statement (one round trip, atomic without an explicit transaction, committed without
 * waiting for the WAL flush: see `asyncCommit`), since this runs once per job on the
 * worker's hot path. Results too large for an inline NOTIFY take the
 * transactional path with the event stored by reference.
 */
import { ignoredRow, sql, type DatabasePool } from "../db/pool.ts";
import { inlinePayload, REALTIME_CHANNEL } from "../events/publish.ts";
import { jobCompletedEvent, publishJobCompleted } from "./events.ts";
import { asyncCommit, markSucceeded, type JobRow } from "./records.ts";

/** Marks the running job `running` succeeded with `result` and publishes `JobCompleted`. */
export async function finishSucceeded(pool: DatabasePool, running: JobRow, result: unknown): Promise<void> {
  const now = new Date();
  const finished: JobRow = {
    ...running,
    status: "succeeded",
    progress: 100,
    result: result ?? null,
    error: null,
    error_code: null,
    error_details: null,
    finished_at: now,
    updated_at: now,
  };
  const payload = inlinePayload(jobCompletedEvent(finished));
  if (payload === undefined) {
    await pool.transaction(async (tx) => {
      const row = await markSucceeded(tx, running.id, result ?? null);
      if (row) await publishJobCompleted(tx, row);
    });
    return;
  }
  // Nothing is read back: a job no longer running updates no row and notifies nothing.
  await pool.query(sql.prepared("jobs_finish_succeeded", ignoredRow)`
    with ${asyncCommit}, done as (
      update jobs set status = 'succeeded', progress = 100, result = ${sql.jsonb((result ?? null) as never)},
        error = null, error_code = null, error_details = null,
        finished_at = ${now.toISOString()}, updated_at = ${now.toISOString()}
      where id = ${running.id} and status = 'running'
      returning id
    )
    select done.id, pg_notify(${REALTIME_CHANNEL}, ${payload}) from done, async_commit`);
}
