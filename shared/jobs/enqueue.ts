/**
 * Enqueueing: a job record and its graphile-worker job are written in one statement on the
 * caller's connection, so inside a transaction the job exists only if the row it serves
 * commits. The worker job carries key `job:{id}`, which lets a queued job be cancelled.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";
import type { JobKind, PayloadOf } from "./kind.ts";
import { jobColumns, jobRow, type JobRow } from "./records.ts";

/** What the worker receives: our record's id and the kind's payload. */
export const envelopeSchema = z.object({ job_id: z.number().int().positive(), payload: z.unknown() });
export type Envelope = z.infer<typeof envelopeSchema>;

/** The graphile-worker job key of job record `id`. */
export const workerJobKey = (id: number) => `job:${id}`;

export interface EnqueueOptions {
  /** Who may read the job (GET /jobs/{id}, channel private-job.{id}). */
  userId?: number | null;
  projectId?: number | null;
  /** Run no earlier than this. */
  runAt?: Date;
  /** Lower runs first (graphile-worker's priority, default 0). */
  priority?: number;
}

/**
 * Records and enqueues a job of `kind`.
 * @throws ZodError when the payload does not match the kind's schema (a programming error).
 */
export async function enqueue<K extends JobKind>(
  conn: CommonQueryMethods,
  kind: K,
  payload: PayloadOf<K>,
  options: EnqueueOptions = {},
): Promise<JobRow> {
  const parsed: unknown = kind.payload.parse(payload);
  return conn.one(sql.prepared("jobs_enqueue", jobRow)`
    with record as (
      insert into jobs (kind, max_attempts, user_id, project_id, payload)
      values (${kind.name}, ${kind.maxAttempts}, ${options.userId ?? null}, ${options.projectId ?? null}, ${sql.jsonb((parsed ?? null) as never)})
      returning *
    ), queued as (
      select graphile_worker.add_job(
        identifier => ${kind.name}::text,
        payload => json_build_object('job_id', record.id, 'payload', ${sql.json((parsed ?? null) as never)}::json),
        queue_name => ${kind.queueName ?? null}::text,
        run_at => ${options.runAt ? options.runAt.toISOString() : null}::timestamptz,
        max_attempts => ${kind.maxAttempts}::int,
        job_key => 'job:' || record.id,
        priority => ${options.priority ?? null}::int
      ) from record
    )
    select ${jobColumns} from record, queued`);
}
