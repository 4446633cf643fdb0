/**
 * Scheduled: removes generation archives past their expiry from storage and marks them
 * deleted (downloads then answer 404; the generation and its files stay).
 */
import { z } from "zod";
import { sql } from "../../shared/db/pool.ts";
import { removeArchive } from "../../shared/generations/archive.ts";
import { archivesCleanup } from "../../shared/jobs/kinds.ts";
import { defineTask } from "../defineTask.ts";

const expiredRow = z.object({ id: z.number(), file_path: z.string().nullable() });

export default defineTask(archivesCleanup, async (_payload, { deps, log }) => {
  let removed = 0;
  for (;;) {
    const rows = await deps.pool.any(sql.type(expiredRow)`
      select id, file_path from project_archives
      where deleted_at is null and expires_at < now() order by expires_at limit 200`);
    for (const row of rows) if (await removeArchive(deps.pool, deps.storage, row)) removed += 1;
    if (rows.length < 200) break;
  }
  log.info({ removed }, "expired archives removed");
  return { removed };
});
