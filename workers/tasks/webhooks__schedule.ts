/**
 * Every minute (crontab): deliveries of the scheduled webhooks due at this tick
 * (see shared/webhooks/schedule.ts).
 */
import { webhooksSchedule } from "../../shared/jobs/kinds.ts";
import { scheduleDue } from "../../shared/webhooks/schedule.ts";
import { defineTask } from "../defineTask.ts";

export default defineTask(webhooksSchedule, async (payload, { deps, log }) => {
  const tick = payload._cron?.ts ? new Date(payload._cron.ts) : new Date();
  const scheduled = await scheduleDue(deps.pool, tick, log);
  return { tick: tick.toISOString(), scheduled };
});
