/**
 * Applies one payment webhook event recorded by the webhook routes (credits, failures,
 * refunds, order captures). Idempotent: a finished event is skipped.
 */
import { paymentsProcess } from "../../shared/jobs/kinds.ts";
import { processPaymentEvent } from "../../shared/payments/events.ts";
import { defineTask } from "../defineTask.ts";

export default defineTask(paymentsProcess, async (payload, { deps, log }) => {
  const effect = await processPaymentEvent(deps.pool, deps.config, payload.payment_event_id, log);
  return { effect };
});
