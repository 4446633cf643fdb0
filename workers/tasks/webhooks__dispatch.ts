/**
 * Fans CodeGenerated outbox events out to webhook deliveries (see shared/webhooks/dispatch.ts):
 * kicked by the outbox trigger and run every minute by the crontab.
 */
import { webhooksDispatch } from "../../shared/jobs/kinds.ts";
import { dispatchCodeGenerated } from "../../shared/webhooks/dispatch.ts";
import { defineTask } from "../defineTask.ts";

export default defineTask(webhooksDispatch, async (_payload, { deps, log }) => {
  const outcome = await dispatchCodeGenerated(deps.pool);
  if (outcome.events) log.info(outcome, "outbox events dispatched to webhooks");
  return outcome;
});
