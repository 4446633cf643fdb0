/**
 * Scheduled: removes the storage files of deleted media (see shared/media/garbage.ts), in
 * batches; a sweep stopped by shutdown leaves the rest to the next run.
 */
import { mediaSweep } from "../../shared/jobs/kinds.ts";
import { sweepMediaGarbage } from "../../shared/media/garbage.ts";
import { defineTask } from "../defineTask.ts";

const BATCH = 100;

export default defineTask(mediaSweep, async (_payload, { deps, log, signal }) => {
  let removed = 0;
  while (!signal.aborted) {
    const batch = await sweepMediaGarbage(deps.pool, deps.storage, BATCH);
    removed += batch;
    if (batch < BATCH) break;
  }
  log.info({ removed }, "storage files of deleted media removed");
  return { removed };
});
