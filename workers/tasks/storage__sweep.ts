/**
 * Scheduled: removes storage objects that expired more than a grace period ago, whatever
 * wrote them: generation archives (archives__cleanup normally removes them first and marks
 * them deleted; this catches what it missed), deployment upload bundles whose job never
 * removed them (cancelled while queued, or a worker lost mid-run), and outbox e-mails.
 *
 * The grace period lets a job that still needs an object use it after its expiry: an upload
 * bundle expires an hour after the request, but its job may start later on a busy queue, and
 * a first attempt may run the whole DEPLOYMENT_TIMEOUT_S before the retry reads the bundle
 * again. A job that comes later still finds no bundle and fails with a message.
 *
 * Objects go in batches of short statements; a sweep stopped by shutdown leaves the rest to
 * the next run, and two sweeps at once skip each other's rows.
 */
import type { Config } from "../../shared/config.ts";
import { storageSweep } from "../../shared/jobs/kinds.ts";
import { defineTask } from "../defineTask.ts";

/** Objects removed per statement. */
export const SWEEP_BATCH = 100;

/** How long after its expiry an object is kept: one deployment run, plus an hour for a queue backlog and retry back-off. */
export const sweepGraceMs = (config: Config) => config.deployments.timeoutMs + 60 * 60 * 1000;

export default defineTask(storageSweep, async (_payload, { deps, log, signal }) => {
  const expiredBefore = new Date(Date.now() - sweepGraceMs(deps.config));
  let removed = 0;
  while (!signal.aborted) {
    const batch = await deps.storage.deleteExpired({ expiredBefore, limit: SWEEP_BATCH });
    removed += batch;
    if (batch < SWEEP_BATCH) break;
  }
  log.info({ removed, expired_before: expiredBefore.toISOString() }, "expired storage objects removed");
  return { removed };
});
