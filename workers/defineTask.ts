/**
 * Task definitions and the wrapper that runs them under our job-record lifecycle:
 * queued → running (attempt n) → succeeded | failed, with `JobProgress` / `JobCompleted`
 * events. A task that throws is retried by graphile-worker with exponential back-off until
 * its kind's attempts are used up; a permanent error (bad input) fails the job at once.
 * A job whose record is already finished or cancelled is skipped, which makes a retry after
 * a crash between "our record says done" and "graphile-worker deleted its row" harmless.
 */
import type { JobHelpers, Task } from "graphile-worker";
import { envelopeSchema } from "../shared/jobs/enqueue.ts";
import { describeJobError, isPermanent } from "../shared/jobs/errors.ts";
import { publishJobCompleted, publishJobProgress } from "../shared/jobs/events.ts";
import type { JobKind, ParsedPayloadOf } from "../shared/jobs/kind.ts";
import { finishSucceeded } from "../shared/jobs/finish.ts";
import { markFailed, markProgress, markRetrying, markRunning } from "../shared/jobs/records.ts";
import type { TaskContext, WorkerDeps } from "./context.ts";

export interface TaskDefinition<K extends JobKind = JobKind> {
  kind: K;
  run: (payload: ParsedPayloadOf<K>, ctx: TaskContext) => Promise<unknown>;
}

/** Declares the task that runs jobs of `kind`; the default export of a file in workers/tasks/. */
export function defineTask<K extends JobKind>(kind: K, run: TaskDefinition<K>["run"]): TaskDefinition<K> {
  return { kind, run };
}

/** Wraps a definition into a graphile-worker task bound to the process's resources. */
export function wrapTask(definition: TaskDefinition, deps: WorkerDeps): Task {
  const { kind } = definition;
  return async (raw: unknown, helpers: JobHelpers) => {
    const attempt = helpers.job.attempts;
    const maxAttempts = helpers.job.max_attempts;
    const log = deps.log.child({ task: kind.name, worker_job: helpers.job.id, attempt });
    const envelope = envelopeSchema.safeParse(raw);
    const jobId = envelope.success ? envelope.data.job_id : null;
    const payloadInput = envelope.success ? envelope.data.payload : raw;

    let running: Awaited<ReturnType<typeof markRunning>> = null;
    if (jobId !== null) {
      running = await markRunning(deps.pool, jobId, attempt);
      if (!running) {
        log.info({ job: jobId }, "job record already finished or cancelled; skipping");
        return;
      }
    }
    const ctx: TaskContext = {
      deps,
      jobId,
      attempt,
      maxAttempts,
      log: jobId === null ? log : log.child({ job: jobId }),
      signal: helpers.abortSignal,
      progress: async (percent, message) => {
        if (jobId === null) return;
        const value = Math.max(0, Math.min(100, Math.round(percent)));
        await deps.pool.transaction(async (tx) => {
          await markProgress(tx, jobId, value, message ?? null);
          await publishJobProgress(tx, jobId, value, message ?? null);
        });
        if (running) running = { ...running, progress: value, progress_message: message ?? null };
      },
    };

    const payload = kind.payload.safeParse(payloadInput);
    if (!payload.success) {
      ctx.log.error({ issues: payload.error.issues }, "malformed job payload; failing the job");
      if (jobId !== null) await fail(deps, jobId, { message: "The job's payload is malformed.", code: "invalid_payload", status: 500 });
      return;
    }

    let result: unknown;
    try {
      result = await definition.run(payload.data, ctx);
    } catch (error) {
      const final = isPermanent(error) || attempt >= maxAttempts;
      const described = describeJobError(error, final && !isPermanent(error));
      if (jobId === null) throw error;
      if (final) {
        ctx.log.warn({ err: error }, "job failed");
        await fail(deps, jobId, described);
        return; // our record says failed; graphile-worker may drop its row
      }
      ctx.log.warn({ err: error }, "job attempt failed; will retry");
      await markRetrying(deps.pool, jobId, described);
      throw error;
    }
    if (running) await finishSucceeded(deps.pool, running, result);
  };
}

async function fail(deps: WorkerDeps, jobId: number, error: Parameters<typeof markFailed>[2]) {
  await deps.pool.transaction(async (tx) => {
    const row = await markFailed(tx, jobId, error);
    if (row) await publishJobCompleted(tx, row);
  });
}
