/**
 * Daily (crontab): renews the subscriptions and patron memberships whose period ended by the
 * tick, charging their owners' credits, and expires those cancelled or not covered (see
 * shared/subscriptions/subscriptions.ts). The tick is the run's clock, so a test moves time
 * by giving it one.
 */
import { subscriptionsRenew } from "../../shared/jobs/kinds.ts";
import { runPatronRenewals } from "../../shared/patrons/renewal.ts";
import { runRenewals } from "../../shared/subscriptions/subscriptions.ts";
import { defineTask } from "../defineTask.ts";

export default defineTask(subscriptionsRenew, async (payload, { deps, log }) => {
  const tick = payload._cron?.ts ? new Date(payload._cron.ts) : new Date();
  const subscriptions = await runRenewals(deps.pool, tick, log);
  const patrons = await runPatronRenewals(deps.pool, tick, log);
  return { tick: tick.toISOString(), subscriptions, patrons };
});
