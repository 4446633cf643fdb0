/**
 * Refunds at its provider a payment that succeeded but delivered nothing, or a store sale an
 * administrator refunded, and applies the refund with its credit note (shared/payments/autoRefund.ts). Idempotent: the provider call carries a key of the
 * transaction, and a refunded transaction is skipped.
 */
import { paymentsRefund } from "../../shared/jobs/kinds.ts";
import { issueAutomaticRefund } from "../../shared/payments/autoRefund.ts";
import { defineTask } from "../defineTask.ts";

export default defineTask(paymentsRefund, async (payload, { deps }) => {
  const effect = await issueAutomaticRefund(deps.pool, deps.config, payload.transaction_id);
  return { effect };
});
