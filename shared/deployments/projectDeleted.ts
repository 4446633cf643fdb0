/**
 * A deleted project deploys nothing more: deployments (commits and pushes included) still
 * queued when it is deleted are cancelled in the deleting transaction (failed with the reason,
 * their jobs cancelled, `DeploymentCompleted` sent), and a run that a worker starts after the
 * deletion anyway (a job it already held, a retry waiting for its back-off) fails before it
 * connects anywhere. A run already transferring files is left to finish: stopping it half-way
 * would leave the target in a worse state than either outcome.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";
import { workerJobKey } from "../jobs/enqueue.ts";
import { publishJobCompleted } from "../jobs/events.ts";
import { markCancelled } from "../jobs/records.ts";
import { DeployError } from "../deploy/errors.ts";
import { publishCompleted } from "./logs.ts";

/** What a deployment of a deleted project records. */
export const PROJECT_DELETED_RUN = { message: "Not run: the project was deleted before the deployment started.", code: "project_deleted" } as const;

/** Cancels `projectId`'s queued deployments; returns how many. Call it in the transaction that deletes the project. */
export async function cancelProjectDeployments(tx: CommonQueryMethods, projectId: number): Promise<number> {
  const cancelled = await tx.any(sql.type(z.object({ id: z.number(), job_id: z.number() }))`
    update deployments set status = 'failed', error = ${PROJECT_DELETED_RUN.message}, error_code = ${PROJECT_DELETED_RUN.code},
      finished_at = now(), updated_at = now()
    where project_id = ${projectId} and status = 'pending' and job_id is not null
    returning id, job_id`);
  for (const { id, job_id: jobId } of cancelled) {
    const job = await markCancelled(tx, jobId);
    // Deletes the worker job; one a worker locked a moment ago finds its deployment no longer pending.
    await tx.query(sql.type(z.object({}))`select graphile_worker.remove_job(${workerJobKey(jobId)})`);
    if (job) await publishJobCompleted(tx, job);
    await publishCompleted(tx, id, "failed");
  }
  return cancelled.length;
}

/** Refuses to run a deployment of a deleted project. @throws DeployError `project_deleted` */
export async function assertProjectLive(conn: CommonQueryMethods, projectId: number): Promise<void> {
  const deleted = await conn.maybeOneFirst(sql.type(z.object({ deleted: z.boolean() }))`
    select deleted_at is not null as deleted from projects where id = ${projectId}`);
  if (deleted !== false) throw new DeployError("project_deleted", PROJECT_DELETED_RUN.message);
}
