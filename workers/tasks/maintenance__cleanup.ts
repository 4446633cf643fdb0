/**
 * Housekeeping: realtime events spilled to `realtime_payloads` are only needed for the
 * moment it takes every web process to load them; finished job records are kept 30 days;
 * stand-alone parses expire after a week; a schema change whose parse job never finished
 * (its attempts ran out on a crash, not on bad SQL) is dropped after a day, together with
 * a schema that never parsed. Identity rows past their use (rate-limit windows, revoked
 * tokens, OAuth models, challenges, devices, reset tokens) go too (shared/auth/upkeep.ts).
 */
import { z } from "zod";
import { purgeIdentityRows } from "../../shared/auth/upkeep.ts";
import { sql } from "../../shared/db/pool.ts";
import { maintenanceCleanup } from "../../shared/jobs/kinds.ts";
import { RATE_LIMIT_WINDOW_S } from "../../shared/rateLimit.ts";
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
  // The console reads the last hour of the finished-jobs roll-up (sql/migrations/0105).
  const counts = await deps.pool.oneFirst(sql.type(count)`
    with gone as (delete from job_finish_counts where minute < now() - interval '1 day' returning 1)
    select count(*)::int as count from gone`);
  const parses = await deps.pool.oneFirst(sql.type(count)`
    with gone as (delete from sql_parses where expires_at < now() returning 1)
    select count(*)::int as count from gone`);
  const revisions = await deps.pool.oneFirst(sql.type(count)`
    with gone as (delete from schema_revisions where created_at < now() - interval '1 day' returning 1),
    unparsed as (delete from schemas where status = 'parsing' and created_at < now() - interval '1 day' returning 1)
    select (select count(*) from gone)::int + (select count(*) from unparsed)::int as count`);
  const identity = await purgeIdentityRows(deps.pool, Math.max(RATE_LIMIT_WINDOW_S, deps.config.rateLimit.loginLockoutS));
  log.info({ payloads, jobs, job_finish_counts: counts, parses, revisions, ...identity }, "cleanup done");
  return { realtime_payloads: payloads, jobs, job_finish_counts: counts, sql_parses: parses, schema_revisions: revisions, ...identity };
});
