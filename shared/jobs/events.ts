/**
 * Realtime events of a job, on channel `private-job.{id}`: `JobProgress` while it runs and
 * one `JobCompleted` when it ends (succeeded, failed or cancelled).
 */
import { z } from "zod";
import type { CommonQueryMethods } from "../db/pool.ts";
import { publish, type RealtimeEvent } from "../events/publish.ts";
import type { JobRow } from "./records.ts";

export const jobChannel = (id: number) => `private-job.${id}`;

/** The job as clients see it (GET /api/jobs/{id}, events, 202 bodies). */
const errorDetails = z.object({ errors: z.record(z.string(), z.array(z.string())).nullable().optional() }).nullable().catch(null);

/**
 * `withContent: false` leaves out (null) what may quote the project: the result, the error
 * message and its per-field errors (a template error quotes template text and file names)
 * and the progress message (which may name files). For a project's job whose caller may no
 * longer read the project (api/policies/job.ts `canReadJobContent`); status, progress,
 * `error_code` and times stay.
 */
export function presentJob(row: JobRow, options: { withContent?: boolean } = {}) {
  const withContent = options.withContent ?? true;
  const details = withContent ? errorDetails.parse(row.error_details ?? null) : null;
  return {
    id: row.id,
    kind: row.kind,
    status: row.status,
    progress: row.progress,
    progress_message: withContent ? row.progress_message : null,
    result: withContent && row.status === "succeeded" ? (row.result ?? null) : null,
    error: withContent ? row.error : null,
    error_code: row.error_code,
    errors: details?.errors ?? null,
    attempts: row.attempts,
    max_attempts: row.max_attempts,
    project_id: row.project_id,
    created_at: row.created_at.toISOString(),
    started_at: row.started_at?.toISOString() ?? null,
    finished_at: row.finished_at?.toISOString() ?? null,
  };
}
export type PresentedJob = ReturnType<typeof presentJob>;

export async function publishJobProgress(conn: CommonQueryMethods, id: number, progress: number, message: string | null) {
  await publish(conn, { channel: jobChannel(id), event: "JobProgress", data: { job_id: id, progress, message } });
}

/** The `JobCompleted` event of a finished job. */
export const jobCompletedEvent = (row: JobRow): RealtimeEvent => ({
  channel: jobChannel(row.id),
  event: "JobCompleted",
  data: { job_id: row.id, status: row.status, job: presentJob(row) },
});

export async function publishJobCompleted(conn: CommonQueryMethods, row: JobRow) {
  await publish(conn, jobCompletedEvent(row));
}
