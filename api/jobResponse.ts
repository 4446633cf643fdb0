/**
 * Answers a request whose work runs as a job (DESIGN §4): wait for the job (LISTEN, up to
 * SYNC_WAIT_MS) and answer as the route's spec says, or answer `202 {message, job}` with
 * `Location: /api/jobs/{id}` when the client sent `Prefer: respond-async` or the job
 * outlives the wait. A failed job answers with the error it stored (e.g. 422 and its
 * field map for input the worker rejected).
 */
import { z } from "zod";
import { AppError } from "../shared/errors.ts";
import { jobResource } from "./routes/jobs/jobs.schema.ts";
import { awaitJob } from "../shared/jobs/await.ts";
import { presentJob } from "../shared/jobs/events.ts";
import type { JobRow } from "../shared/jobs/records.ts";
import type { AppContext } from "./context.ts";

/** The 202 answer of a route that runs a job, for its `responses`. */
export const acceptedResponse = {
  202: {
    description: "Accepted: sent with `Prefer: respond-async`, or the job outlived the wait; follow `Location` (GET /jobs/{id})",
    schema: z.object({ message: z.string(), job: jobResource }),
  },
};

/** Whether the client asked not to wait (RFC 7240 `Prefer: respond-async`). */
export const prefersAsync = (ctx: AppContext) => /(^|[,\s])respond-async(\s*(;|,|$))/i.test(ctx.get("prefer"));

function accepted(ctx: AppContext, job: JobRow, requested: boolean): void {
  ctx.status = 202;
  ctx.set("Location", `/api/jobs/${job.id}`);
  if (requested) ctx.set("Preference-Applied", "respond-async");
  ctx.body = { message: "Accepted: the work continues in the background; follow the job for its result.", job: presentJob(job) };
}

/**
 * Waits for `job` (enqueued by this request) and calls `onSucceeded` with its finished row,
 * or answers 202.
 */
export async function respondWithJob(ctx: AppContext, job: JobRow, onSucceeded: (row: JobRow) => void | Promise<void>): Promise<void> {
  if (prefersAsync(ctx)) return accepted(ctx, job, true);
  const row = await awaitJob(ctx.deps.pool, ctx.deps.hub, job.id, ctx.deps.config.syncWaitMs);
  switch (row.status) {
    case "succeeded":
      return onSucceeded(row);
    case "failed": {
      const details = (row.error_details ?? {}) as { status?: number; errors?: Record<string, string[]> | null };
      const status = details.status && details.status >= 400 && details.status < 500 ? details.status : 500;
      const message = status === 500 ? "The background job failed." : (row.error ?? "The request failed.");
      throw new AppError(status, row.error_code ?? "job_failed", message, details.errors ?? undefined);
    }
    case "cancelled":
      throw new AppError(409, "job_cancelled", "The job was cancelled before it ran.");
    default:
      return accepted(ctx, row, false);
  }
}
