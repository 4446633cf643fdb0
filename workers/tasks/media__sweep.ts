/**
 * Scheduled: removes the storage files of deleted media (see shared/media/garbage.ts), then
 * stored files no row references, older than a day (a crash between an upload's file and its
 * row; see shared/storage/orphans.ts), in batches; a sweep stopped by shutdown leaves the rest
 * to the next run.
 */
import { mediaSweep } from "../../shared/jobs/kinds.ts";
import { sweepMediaGarbage } from "../../shared/media/garbage.ts";
import { deleteOrphanBatch } from "../../shared/storage/orphans.ts";
import { defineTask } from "../defineTask.ts";

const BATCH = 100;

export default defineTask(mediaSweep, async (_payload, { deps, log, signal }) => {
  let removed = 0;
  while (!signal.aborted) {
    const batch = await sweepMediaGarbage(deps.pool, deps.storage, BATCH);
    removed += batch;
    if (batch < BATCH) break;
  }
  let orphans = 0;
  for (let afterId = 0; !signal.aborted; ) {
    const batch = await deleteOrphanBatch(deps.pool, afterId);
    orphans += batch.removed;
    if (batch.lastId === null) break;
    afterId = batch.lastId;
  }
  log.info({ removed, orphans }, "storage files of deleted media and unreferenced files removed");
  return { removed, orphans };
});
