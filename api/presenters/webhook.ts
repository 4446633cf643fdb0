/**
 * The webhook resource (spec "Outbound webhooks") and its delivery log. `secret_key` is never
 * answered, not even by the create call (DESIGN §8: secrets are never returned); the resource
 * says `has_secret_key` instead. The target URL is shown whole only to whoever may configure
 * the webhook: such URLs often carry their own credential (a Slack or Teams incoming-webhook
 * URL, a `?token=`), and anyone holding it can post to that channel, so readers of the
 * project (viewers, members) see its origin only, with `target_url_redacted`.
 */
import { z } from "zod";
import { nextRun } from "../../shared/webhooks/cron.ts";
import { deliveryStatuses, webhookEvents, type DeliveryRow, type WebhookRow } from "../../shared/webhooks/store.ts";

export const webhookResource = z.object({
  id: z.number(),
  project_id: z.number(),
  event_type: z.enum(webhookEvents),
  target_url: z.string(),
  /** True when `target_url` shows only the origin (the caller may not configure the webhook). */
  target_url_redacted: z.boolean(),
  is_active: z.boolean(),
  has_secret_key: z.boolean(),
  cron: z.string().nullable(),
  timezone: z.string(),
  next_run_at: z.string().nullable(),
  consecutive_failures: z.number(),
  deactivated_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

/** The origin of a target URL, with an ellipsis for the path and query it hides. */
export function redactTarget(url: string): string {
  try {
    const parsed = new URL(url);
    return parsed.pathname === "/" && parsed.search === "" && parsed.hash === "" ? `${parsed.origin}/` : `${parsed.origin}/…`;
  } catch {
    return "…";
  }
}

/** A webhook, without its secret; the target URL redacted unless `fullTarget`. */
export function presentWebhook(row: WebhookRow, { fullTarget }: { fullTarget: boolean }): z.infer<typeof webhookResource> {
  const next = row.event_type === "scheduled" && row.cron && row.is_active ? nextRun(row.cron, row.timezone) : null;
  return {
    id: row.id,
    project_id: row.project_id,
    event_type: row.event_type,
    target_url: fullTarget ? row.target_url : redactTarget(row.target_url),
    target_url_redacted: !fullTarget,
    is_active: row.is_active,
    has_secret_key: true,
    cron: row.cron,
    timezone: row.timezone,
    next_run_at: next?.toISOString() ?? null,
    consecutive_failures: row.consecutive_failures,
    deactivated_at: row.deactivated_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export const deliveryResource = z.object({
  id: z.number(),
  webhook_id: z.number(),
  event: z.enum(webhookEvents),
  source: z.string(),
  payload: z.record(z.string(), z.unknown()),
  status: z.enum(deliveryStatuses),
  attempts: z.number(),
  response_status: z.number().nullable(),
  error: z.string().nullable(),
  job_id: z.number().nullable(),
  created_at: z.string(),
  last_attempt_at: z.string().nullable(),
  delivered_at: z.string().nullable(),
  finished_at: z.string().nullable(),
});

/** A delivery as the delivery log shows it (the payload without its signature). */
export function presentDelivery(row: DeliveryRow): z.infer<typeof deliveryResource> {
  return {
    id: row.id,
    webhook_id: row.webhook_id,
    event: row.event,
    source: row.source_key,
    payload: row.payload,
    status: row.status,
    attempts: row.attempts,
    response_status: row.response_status,
    error: row.error,
    job_id: row.job_id,
    created_at: row.created_at.toISOString(),
    last_attempt_at: row.last_attempt_at?.toISOString() ?? null,
    delivered_at: row.delivered_at?.toISOString() ?? null,
    finished_at: row.finished_at?.toISOString() ?? null,
  };
}
