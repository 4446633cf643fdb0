/**
 * Rolls raw page views older than VISITS_RETENTION_DAYS into daily figures and deletes
 * them, and deletes the salts of past days (so no old visitor hash can be recomputed).
 */
import { visitsRollup } from "../../shared/jobs/kinds.ts";
import { utcDay } from "../../shared/usage/visitor.ts";
import { rollUpVisits } from "../../shared/usage/visitStore.ts";
import { defineTask } from "../defineTask.ts";

export default defineTask(visitsRollup, async (_payload, { deps }) => {
  const now = new Date();
  const cutoff = utcDay(new Date(now.getTime() - deps.config.visits.retentionDays * 86_400_000));
  const rolledUp = await deps.pool.transaction((tx) => rollUpVisits(tx, cutoff, utcDay(now)));
  return { rolled_up: rolledUp, cutoff };
});
