/**
 * Runs a deployment of the upload form (see shared/deployments/upload.ts); the outcome,
 * success or failure, with its log, is the job's result. The last attempt removes the
 * sealed bundle whatever happens, since no retry will need it.
 */
import { runUpload } from "../../shared/deployments/upload.ts";
import { deploymentsUpload } from "../../shared/jobs/kinds.ts";
import { networkPolicy } from "../../shared/net/networkGuard.ts";
import { defineTask } from "../defineTask.ts";

export default defineTask(deploymentsUpload, async (payload, { deps, jobId, signal, attempt, maxAttempts, log }) =>
  runUpload(deps.storage, deps.config.appKey, payload.upload_key, {
    runId: `upload-${jobId ?? Date.now()}`,
    network: networkPolicy(deps.config),
    signal: AbortSignal.any([signal, AbortSignal.timeout(deps.config.deployments.timeoutMs)]),
    finalAttempt: attempt >= maxAttempts,
    log,
    maxFiles: deps.config.deployments.uploadMaxFiles,
  }),
);
