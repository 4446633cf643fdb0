/**
 * Scheduled webhooks: on every minute's cron tick, each active `scheduled` webhook whose
 * cron expression matches the tick (in its timezone) gets one delivery, unless its project
 * was deleted. The source key is the tick's minute, so a tick that runs twice delivers once.
 */
import { ignoredRow, sql, type DatabasePool } from "../db/pool.ts";
import type { Logger } from "../logger.ts";
import { cronMatches } from "./cron.ts";
import { latestGeneration, scheduleDelivery, webhookColumns, webhookRow } from "./store.ts";

/** Schedules the deliveries due at `tick` (rounded down to its minute); returns how many. */
export async function scheduleDue(pool: DatabasePool, tick: Date, log: Logger): Promise<number> {
  const minute = new Date(Math.floor(tick.getTime() / 60_000) * 60_000);
  const hooks = await pool.any(sql.type(webhookRow)`
    select ${webhookColumns} from webhooks
    where event_type = 'scheduled' and is_active and cron is not null
      -- A deleted project is gone for every read; its schedule must not keep announcing it.
      and project_id in (select id from projects where deleted_at is null)
    order by id`);
  let scheduled = 0;
  for (const hook of hooks) {
    let due: boolean;
    try {
      due = cronMatches(hook.cron!, hook.timezone, minute);
    } catch (error) {
      log.warn({ webhook: hook.id, err: error }, "stored cron expression no longer parses; skipped");
      continue;
    }
    if (!due) continue;
    const id = await pool.transaction(async (tx) => {
      const delivery = await scheduleDelivery(tx, hook, `scheduled:${minute.toISOString()}`, {
        event: "scheduled",
        project_id: hook.project_id,
        code_generation_id: await latestGeneration(tx, hook.project_id),
        timestamp: minute.toISOString(),
      });
      await tx.query(sql.type(ignoredRow)`update webhooks set last_scheduled_at = ${minute.toISOString()} where id = ${hook.id}`);
      return delivery;
    });
    if (id !== null) scheduled += 1;
  }
  return scheduled;
}
