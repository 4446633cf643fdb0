/**
 * Runs a deployment of the upload form (see shared/deployments/upload.ts); the outcome,
 * success or failure, with its log, is the job's result.
 */
import { runUpload } from "../../shared/deployments/upload.ts";
import { deploymentsUpload } from "../../shared/jobs/kinds.ts";
import { networkPolicy } from "../../shared/net/networkGuard.ts";
import { defineTask } from "../defineTask.ts";

export default defineTask(deploymentsUpload, async (payload, { deps, jobId, signal }) =>
  runUpload(deps.storage, deps.config.appKey, payload.upload_key, {
    runId: `upload-${jobId ?? Date.now()}`,
    network: networkPolicy(deps.config),
    signal: AbortSignal.any([signal, AbortSignal.timeout(deps.config.deployments.timeoutMs)]),
  }),
);
