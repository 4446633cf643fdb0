/**
 * Queries on `jobs`, our durable record of every enqueued unit of work.
 * Status moves queued → running → succeeded | failed, or queued → cancelled; a failed
 * attempt that will be retried moves running → queued and keeps its error for display.
 */
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods } from "../db/pool.ts";
import type { StoredJobError } from "./errors.ts";

export const jobStatuses = ["queued", "running", "succeeded", "failed", "cancelled"] as const;
export type JobStatus = (typeof jobStatuses)[number];

export const jobRow = z.object({
  id: z.number(),
  kind: z.string(),
  status: z.enum(jobStatuses),
  progress: z.number(),
  progress_message: z.string().nullable(),
  result: z.unknown(),
  error: z.string().nullable(),
  error_code: z.string().nullable(),
  error_details: z.unknown(),
  attempts: z.number(),
  max_attempts: z.number(),
  user_id: z.number().nullable(),
  project_id: z.number().nullable(),
  created_at: z.date(),
  started_at: z.date().nullable(),
  finished_at: z.date().nullable(),
  updated_at: z.date(),
});
export type JobRow = z.infer<typeof jobRow>;

/** Column list of `jobRow`, for queries in other modules that return job rows. */
export const jobColumns = sql.fragment`id, kind, status, progress, progress_message, result, error, error_code, error_details,
  attempts, max_attempts, user_id, project_id, created_at, started_at, finished_at, updated_at`;

/** Terminal statuses: the job will not change again. */
export const isFinished = (status: JobStatus) => status === "succeeded" || status === "failed" || status === "cancelled";

export async function findJob(conn: CommonQueryMethods, id: number): Promise<JobRow | null> {
  return conn.maybeOne(sql.type(jobRow)`select ${jobColumns} from jobs where id = ${id}`);
}

/**
 * The worker's bookkeeping writes (running, progress, succeeded) commit without waiting
 * for the WAL flush. That is safe here: graphile-worker completes or fails the job
 * afterwards with a synchronous commit, and flushing that commit flushes every earlier WAL
 * record, ours included; after a crash before it, the job is retried anyway. It keeps the
 * record lifecycle from tripling the fsyncs per job. Used as a CTE of a single statement
 * (an implicit transaction), where `set_config(…, true)` applies to that commit.
 */
export const asyncCommit = sql.fragment`async_commit as (select set_config('synchronous_commit', 'off', true))`;

/** Marks an attempt as started; null when the job is already finished or cancelled (skip it). */
export async function markRunning(conn: CommonQueryMethods, id: number, attempt: number): Promise<JobRow | null> {
  return conn.maybeOne(sql.prepared("jobs_mark_running", jobRow)`
    with ${asyncCommit}
    update jobs set status = 'running', attempts = ${attempt}, started_at = coalesce(started_at, now()), updated_at = now()
    from async_commit
    where id = ${id} and status in ('queued', 'running')
    returning ${jobColumns}`);
}

export async function markProgress(conn: CommonQueryMethods, id: number, progress: number, message: string | null): Promise<void> {
  await conn.query(sql.type(ignoredRow)`
    update jobs set progress = ${progress}, progress_message = ${message}, updated_at = now()
    where id = ${id} and status = 'running'`);
}

export async function markSucceeded(conn: CommonQueryMethods, id: number, result: unknown): Promise<JobRow | null> {
  return conn.maybeOne(sql.type(jobRow)`
    update jobs set status = 'succeeded', progress = 100, result = ${sql.jsonb((result ?? null) as never)},
      error = null, error_code = null, error_details = null, finished_at = now(), updated_at = now()
    where id = ${id} and status = 'running'
    returning ${jobColumns}`);
}

export async function markFailed(conn: CommonQueryMethods, id: number, error: StoredJobError): Promise<JobRow | null> {
  return conn.maybeOne(sql.type(jobRow)`
    update jobs set status = 'failed', error = ${error.message}, error_code = ${error.code},
      error_details = ${sql.jsonb({ status: error.status, errors: error.errors ?? null })},
      finished_at = now(), updated_at = now()
    where id = ${id} and status in ('queued', 'running')
    returning ${jobColumns}`);
}

/** Records a failed attempt that graphile-worker will retry after its back-off. */
export async function markRetrying(conn: CommonQueryMethods, id: number, error: StoredJobError): Promise<void> {
  await conn.query(sql.type(ignoredRow)`
    update jobs set status = 'queued', error = ${error.message}, error_code = ${error.code}, updated_at = now()
    where id = ${id} and status = 'running'`);
}

export async function markCancelled(conn: CommonQueryMethods, id: number): Promise<JobRow | null> {
  return conn.maybeOne(sql.type(jobRow)`
    update jobs set status = 'cancelled', finished_at = now(), updated_at = now()
    where id = ${id} and status = 'queued'
    returning ${jobColumns}`);
}

/** What a job whose worker died on its last attempt stores (no task got to say why). */
export const WORKER_LOST = { message: "The job stopped its worker on every attempt; it was not retried again.", code: "worker_lost", status: 500 } as const;

/**
 * Fails the running jobs whose worker died on their last attempt: graphile-worker's job was
 * unlocked (its process stopped beating) with its attempts used up, so it will never run
 * again and no task will finish the record. Returns the failed records.
 */
export async function failAbandoned(conn: CommonQueryMethods): Promise<readonly JobRow[]> {
  return conn.any(sql.type(jobRow)`
    update jobs set status = 'failed', error = ${WORKER_LOST.message}, error_code = ${WORKER_LOST.code},
      error_details = ${sql.jsonb({ status: WORKER_LOST.status, errors: null })}, finished_at = now(), updated_at = now()
    where status = 'running' and exists (
      select 1 from graphile_worker._private_jobs w
      where w.key = 'job:' || jobs.id and w.locked_at is null and w.attempts >= w.max_attempts)
    returning ${jobColumns}`);
}
