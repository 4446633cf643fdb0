/**
 * One attempt of a deployment run (the `deployments__run` job): mark it running, open the
 * environment's secrets, check every path of the generation (shared/deploy/files.ts: a bad
 * one fails the run with `invalid_config` before anything is written), stream the generation's
 * files to the deployer with the persisted state and a log sink, then record the outcome.
 *
 * Outcomes:
 * - success: `succeeded` with the deployer's result; a rollback marks the deployment it
 *   supersedes `rolled_back`.
 * - a failure that another attempt may fix (network trouble, a 5xx, a worker shutdown), with
 *   attempts left: a warning row, the record stays `running`, the error is rethrown so the
 *   job is retried with back-off.
 * - anything else: `failed` with the scrubbed message and code.
 * Both final outcomes publish `DeploymentCompleted` and record the `DeploymentCompleted`
 * outbox event in the transaction that writes the status. An SSH host key seen for the first
 * time is pinned to the environment as soon as the login succeeds, whatever the outcome.
 */
import { notifyByEmail } from "../notifications/email.ts";
import { notifyByPush } from "../notifications/notify.ts";
import { z } from "zod";
import type { Config } from "../config.ts";
import { ignoredRow, sql, type DatabasePool } from "../db/pool.ts";
import { DeployError } from "../deploy/errors.ts";
import { checkPaths } from "../deploy/files.ts";
import { deploy, type AnyDeployResult, type DeployTarget } from "../deploy/index.ts";
import { scrubberFor, type Scrubber } from "../deploy/scrub.ts";
import { recordEvent } from "../events/outbox.ts";
import { generationFiles, generationPaths } from "../generations/files.ts";
import { PermanentJobError } from "../jobs/errors.ts";
import type { Logger } from "../logger.ts";
import type { DeployLog, HostKeyPinner } from "../deploy/types.ts";
import { runGitOperation } from "../gitops/run.ts";
import { networkPolicy } from "../net/networkGuard.ts";
import { deployTargetOf, findEnvironment, hostKeyPinnerOf, methodsOf, openEnvironmentSecrets } from "./environments.ts";
import { withConnectionToken } from "./gitConnection.ts";
import { assertProjectLive } from "./projectDeleted.ts";
import { appendLog, deploymentLogSink, publishCompleted } from "./logs.ts";
import { findDeployment, type DeploymentRow } from "./records.ts";
import { deploymentState } from "./state.ts";

/** What a run needs from the worker. */
export interface RunContext {
  pool: DatabasePool;
  config: Config;
  log: Logger;
  jobId: number | null;
  attempt: number;
  maxAttempts: number;
  /** Aborted when the worker shuts down. */
  signal: AbortSignal;
}

/** The job's result: what the jobs record keeps (no configuration, no secret). */
export interface RunOutcome {
  deployment_id: number;
  status: "succeeded" | "skipped";
  summary?: string;
}

/** Marks the attempt running; null when the deployment is not this job's to run (finished, or re-executed by another job). */
async function start(pool: DatabasePool, id: number, jobId: number | null): Promise<DeploymentRow | null> {
  const updated = await pool.maybeOneFirst(sql.type(z.object({ id: z.number() }))`
    update deployments set status = 'running', attempts = attempts + 1, started_at = coalesce(started_at, now()),
      error = null, error_code = null, updated_at = now()
    where id = ${id} and status in ('pending', 'running') and job_id is not distinct from ${jobId}
    returning id`);
  return updated === null ? null : findDeployment(pool, id);
}

/** Records the final failure of a deployment and announces it. */
async function finishFailed(pool: DatabasePool, deployment: DeploymentRow, error: DeployError): Promise<void> {
  await pool.transaction(async (tx) => {
    await tx.query(sql.type(ignoredRow)`
      update deployments set status = 'failed', error = ${error.message}, error_code = ${error.code}, finished_at = now(), updated_at = now()
      where id = ${deployment.id}`);
    await announce(tx, deployment, "failed", error.message);
  });
}

async function announce(tx: Parameters<typeof publishCompleted>[0], deployment: DeploymentRow, status: "succeeded" | "failed", error?: string): Promise<void> {
  await publishCompleted(tx, deployment.id, status);
  if (deployment.user_id !== null) {
    await notifyByPush(tx, {
      userId: deployment.user_id,
      kind: "deployment_completed",
      title: status === "succeeded" ? "Deployment succeeded" : "Deployment failed",
      body: `Deployment #${deployment.id} ${status === "succeeded" ? "finished" : "failed"}.`,
      url: `/deployments/${deployment.id}`,
    });
    await notifyByEmail(tx, {
      userId: deployment.user_id,
      kind: "deployment_completed",
      template: status === "succeeded" ? "deployment_succeeded" : "deployment_failed",
      params: { deployment: String(deployment.id), environment: deployment.environment_name ?? `#${deployment.environment_id}`, error: (error ?? "").slice(0, 2000) },
      path: `/deployments/${deployment.id}`,
    });
  }
  await recordEvent(tx, {
    type: "DeploymentCompleted",
    projectId: deployment.project_id,
    actorId: deployment.user_id,
    payload: {
      deployment_id: deployment.id,
      status,
      environment_id: deployment.environment_id,
      code_generation_id: deployment.code_generation_id,
      deployment_method: deployment.deployment_method,
    },
  });
}

/** Records success: result and rollback bookkeeping. */
async function finishSucceeded(pool: DatabasePool, deployment: DeploymentRow, result: AnyDeployResult, scrubber: Scrubber): Promise<void> {
  await pool.transaction(async (tx) => {
    await tx.query(sql.type(ignoredRow)`
      update deployments set status = 'succeeded', result = ${sql.jsonb(scrubber.value(result) as never)},
        error = null, error_code = null, finished_at = now(), updated_at = now()
      where id = ${deployment.id}`);
    if (deployment.rollback_of !== null) {
      await tx.query(sql.type(ignoredRow)`
        update deployments set status = 'rolled_back', rolled_back_by = ${deployment.id}, updated_at = now()
        where id = ${deployment.rollback_of} and status = 'succeeded'`);
    }
    await announce(tx, deployment, "succeeded");
  });
}

/** The target of a deployment with the host key pinner of its environment, or a permanent DeployError explaining why there is none. */
async function targetOf(ctx: RunContext, deployment: DeploymentRow): Promise<{ target: DeployTarget; pinHostKey: HostKeyPinner }> {
  if (deployment.code_generation_id === null) throw new DeployError("invalid_config", "The code generation of this deployment was deleted.");
  const env = deployment.environment_id === null ? null : await findEnvironment(ctx.pool, deployment.environment_id);
  if (!env) throw new DeployError("invalid_config", "The environment of this deployment was deleted.");
  if (!methodsOf(env).includes(deployment.deployment_method)) {
    throw new DeployError("invalid_config", `The environment "${env.name}" has no ${deployment.deployment_method.toUpperCase()} configuration.`);
  }
  const target = await withConnectionToken(
    ctx.pool,
    ctx.config,
    deployTargetOf(env, await openEnvironmentSecrets(ctx.pool, ctx.config.appKey, env.id), deployment.deployment_method),
    env.project_id,
  );
  return { target, pinHostKey: hostKeyPinnerOf(ctx.pool, env) };
}

/**
 * Runs one attempt of deployment `id` (a commit or push goes to shared/gitops/run.ts).
 * @throws the deployer's error when another attempt should follow; PermanentJobError when it failed for good.
 */
export async function runDeployment(ctx: RunContext, id: number): Promise<RunOutcome> {
  const deployment = await start(ctx.pool, id, ctx.jobId);
  if (!deployment) {
    ctx.log.info({ deployment: id }, "deployment is not pending for this job; skipping");
    return { deployment_id: id, status: "skipped" };
  }
  try {
    await assertProjectLive(ctx.pool, deployment.project_id);
  } catch (error) {
    return failBeforeStart(ctx, deployment, error);
  }
  if (deployment.operation !== "deploy") return runGitOperation(ctx, deployment);
  let target: DeployTarget;
  let pinHostKey: HostKeyPinner;
  try {
    ({ target, pinHostKey } = await targetOf(ctx, deployment));
  } catch (error) {
    return failBeforeStart(ctx, deployment, error);
  }
  const scrubber = scrubberFor(target.config);
  return settleRun(
    ctx,
    deployment,
    scrubber,
    `Deployment #${id} to ${deployment.environment_name ?? "the environment"} by ${deployment.deployment_method.toUpperCase()} started (attempt ${ctx.attempt} of ${ctx.maxAttempts}).`,
    async (log, signal) => {
      try {
        // Every path before any is written: the SFTP transfer writes file by file.
        await checkPaths(await generationPaths(ctx.pool, deployment.code_generation_id!));
      } catch (error) {
        if (error instanceof DeployError) await log({ type: "error", message: error.message, metadata: { code: error.code } });
        throw error;
      }
      return deploy(target, {
        deploymentId: id,
        files: generationFiles(ctx.pool, deployment.code_generation_id!),
        log,
        signal,
        state: await deploymentState(ctx.pool, id),
        network: networkPolicy(ctx.config),
        pinHostKey,
      });
    },
  );
}

/** Fails a run whose target could not be made (deleted environment, unreadable configuration). @throws PermanentJobError */
export async function failBeforeStart(ctx: RunContext, deployment: DeploymentRow, error: unknown): Promise<never> {
  const taskId = ctx.jobId === null ? null : String(ctx.jobId);
  const failure = error instanceof DeployError ? error : new DeployError("invalid_config", "The deployment's configuration could not be read.");
  await appendLog(ctx.pool, deployment.id, taskId, { type: "error", message: failure.message, metadata: { code: failure.code } });
  await finishFailed(ctx.pool, deployment, failure);
  throw new PermanentJobError(failure.message, failure.code);
}

/**
 * Runs `body` (a deployer, a commit, a push) for a started deployment under its time limit,
 * with a log sink scrubbed by `scrubber`, and records the outcome.
 * @throws the failure when another attempt should follow; PermanentJobError when it failed for good.
 */
export async function settleRun(
  ctx: RunContext,
  deployment: DeploymentRow,
  scrubber: Scrubber,
  startLine: string,
  body: (log: DeployLog, signal: AbortSignal) => Promise<AnyDeployResult>,
): Promise<RunOutcome> {
  const id = deployment.id;
  const taskId = ctx.jobId === null ? null : String(ctx.jobId);
  const log = deploymentLogSink(ctx.pool, id, taskId, scrubber);
  const timeout = AbortSignal.timeout(ctx.config.deployments.timeoutMs);
  const signal = AbortSignal.any([ctx.signal, timeout]);
  await log({ type: "info", message: startLine, metadata: { attempt: ctx.attempt, code_generation_id: deployment.code_generation_id } });
  try {
    const result = await body(log, signal);
    await finishSucceeded(ctx.pool, deployment, result, scrubber);
    return { deployment_id: id, status: "succeeded", summary: scrubber.text(result.summary) };
  } catch (error) {
    const shutdown = ctx.signal.aborted && !timeout.aborted;
    const failure =
      error instanceof DeployError
        ? error
        : new DeployError("remote_error", scrubber.text(`The deployment stopped unexpectedly: ${error instanceof Error ? error.message : String(error)}`));
    if ((shutdown || failure.retryable) && ctx.attempt < ctx.maxAttempts) {
      const reason = shutdown ? "the worker is stopping" : failure.message;
      await log({ type: "warning", message: `Attempt ${ctx.attempt} did not finish (${reason}); it will be retried.`, metadata: { attempt: ctx.attempt } });
      // The scrubbed DeployError as cause, never the original: SDK errors keep request headers,
      // and the worker logs what a task throws.
      // eslint-disable-next-line preserve-caught-error
      throw new Error(`Deployment #${id} attempt ${ctx.attempt} will be retried: ${failure.code}`, { cause: failure });
    }
    if (timeout.aborted) {
      const timedOut = new DeployError("timeout", `The deployment took longer than ${Math.round(ctx.config.deployments.timeoutMs / 1000)} s and was stopped.`);
      await log({ type: "error", message: timedOut.message, metadata: { code: timedOut.code } });
      await finishFailed(ctx.pool, deployment, timedOut);
      throw new PermanentJobError(timedOut.message, timedOut.code);
    }
    if (!(error instanceof DeployError)) await log({ type: "error", message: failure.message, metadata: { code: failure.code } });
    await finishFailed(ctx.pool, deployment, failure);
    throw new PermanentJobError(failure.message, failure.code);
  }
}

