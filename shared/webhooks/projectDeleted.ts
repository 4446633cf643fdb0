/**
 * A deleted project's webhooks fall silent: deliveries still queued when it is deleted are
 * cancelled in the deleting transaction (their jobs cancelled, the deliveries failed with a
 * reason), and a delivery attempt that starts after the deletion anyway (one a worker had
 * already picked up, or queued by a dispatcher that raced the deletion) is skipped and
 * recorded the same way. The project's record is kept (soft delete), but it is gone for every
 * read, so nothing may keep telling a receiver about it. Neither counts as a failure of the
 * webhook: its receiver was never asked.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";
import { workerJobKey } from "../jobs/enqueue.ts";
import { publishJobCompleted } from "../jobs/events.ts";
import { markCancelled } from "../jobs/records.ts";

/** What a delivery skipped because its project was deleted records as its error. */
export const PROJECT_DELETED = "Not sent: the project was deleted before the delivery went out.";

/** Cancels the queued deliveries of `projectId`'s webhooks; returns how many. Call it in the transaction that deletes the project. */
export async function cancelProjectDeliveries(tx: CommonQueryMethods, projectId: number): Promise<number> {
  const cancelled = await tx.any(sql.type(z.object({ id: z.number(), job_id: z.number().nullable() }))`
    update webhook_deliveries d set status = 'failed', error = ${PROJECT_DELETED}, finished_at = now()
    from webhooks w
    where w.id = d.webhook_id and w.project_id = ${projectId} and d.status = 'pending'
    returning d.id, d.job_id`);
  for (const { job_id: jobId } of cancelled) {
    if (jobId === null) continue;
    const job = await markCancelled(tx, jobId);
    // Deletes the worker job; one a worker locked a moment ago finds its delivery settled.
    await tx.query(sql.type(z.object({}))`select graphile_worker.remove_job(${workerJobKey(jobId)})`);
    if (job) await publishJobCompleted(tx, job);
  }
  return cancelled.length;
}
