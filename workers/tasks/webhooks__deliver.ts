/**
 * One attempt of a webhook delivery (see shared/webhooks/deliver.ts).
 */
import { webhooksDeliver } from "../../shared/jobs/kinds.ts";
import { deliverOnce } from "../../shared/webhooks/deliver.ts";
import { defineTask } from "../defineTask.ts";

export default defineTask(webhooksDeliver, async (payload, { deps, attempt, maxAttempts, signal }) =>
  deliverOnce({ pool: deps.pool, config: deps.config, attempt, maxAttempts, signal }, payload.delivery_id),
);
