/**
 * Runs a deployment (see shared/deployments/run.ts): resumable, so an attempt after a crash
 * or a retry continues where the previous one stopped instead of repeating side effects.
 */
import { runDeployment } from "../../shared/deployments/run.ts";
import { deploymentsRun } from "../../shared/jobs/kinds.ts";
import { defineTask } from "../defineTask.ts";

export default defineTask(deploymentsRun, async (payload, { deps, jobId, attempt, maxAttempts, signal, log }) =>
  runDeployment({ pool: deps.pool, config: deps.config, log, jobId, attempt, maxAttempts, signal }, payload.deployment_id),
);
