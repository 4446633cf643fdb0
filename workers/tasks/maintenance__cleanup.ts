/**
 * Housekeeping: realtime events spilled to `realtime_payloads` are only needed for the
 * moment it takes every web process to load them; finished job records are kept 30 days.
 */
import { z } from "zod";
import { sql } from "../../shared/db/pool.ts";
import { maintenanceCleanup } from "../../shared/jobs/kinds.ts";
import { defineTask } from "../defineTask.ts";

const count = z.object({ count: z.number() });

export default defineTask(maintenanceCleanup, async (_payload, { deps, log }) => {
  const payloads = await deps.pool.oneFirst(sql.type(count)`
    with gone as (delete from realtime_payloads where created_at < now() - interval '1 hour' returning 1)
    select count(*)::int as count from gone`);
  const jobs = await deps.pool.oneFirst(sql.type(count)`
    with gone as (
      delete from jobs where status in ('succeeded', 'failed', 'cancelled') and finished_at < now() - interval '30 days'
      returning 1
    )
    select count(*)::int as count from gone`);
  log.info({ payloads, jobs }, "cleanup done");
  return { realtime_payloads: payloads, jobs };
});
