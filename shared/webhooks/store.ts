/**
 * Outbound webhooks and their deliveries in the database. A delivery is unique per
 * (webhook, source): `outbox:<event id>`, `scheduled:<minute>`, `manual:<uuid>`, so a
 * replayed outbox event or a cron tick run twice never delivers twice.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";
import { enqueue } from "../jobs/enqueue.ts";
import { webhooksDeliver } from "../jobs/kinds.ts";
import type { WebhookPayload } from "./signature.ts";

export const webhookEvents = ["code_generated", "manual_trigger", "scheduled"] as const;
export type WebhookEvent = (typeof webhookEvents)[number];

export const deliveryStatuses = ["pending", "delivering", "succeeded", "failed"] as const;

export const webhookRow = z.object({
  id: z.number(),
  project_id: z.number(),
  event_type: z.enum(webhookEvents),
  target_url: z.string(),
  is_active: z.boolean(),
  cron: z.string().nullable(),
  timezone: z.string(),
  consecutive_failures: z.number(),
  deactivated_at: z.date().nullable(),
  user_id: z.number().nullable(),
  created_at: z.date(),
  updated_at: z.date(),
});
export type WebhookRow = z.infer<typeof webhookRow>;

export const webhookColumns = sql.fragment`id, project_id, event_type, target_url, is_active, cron, timezone, consecutive_failures,
  deactivated_at, user_id, created_at, updated_at`;

/** One webhook, or null. */
export async function findWebhook(conn: CommonQueryMethods, id: number): Promise<WebhookRow | null> {
  return conn.maybeOne(sql.type(webhookRow)`select ${webhookColumns} from webhooks where id = ${id}`);
}

export const deliveryRow = z.object({
  id: z.number(),
  webhook_id: z.number(),
  event: z.enum(webhookEvents),
  source_key: z.string(),
  payload: z.record(z.string(), z.unknown()),
  status: z.enum(deliveryStatuses),
  attempts: z.number(),
  response_status: z.number().nullable(),
  error: z.string().nullable(),
  job_id: z.number().nullable(),
  created_at: z.date(),
  last_attempt_at: z.date().nullable(),
  delivered_at: z.date().nullable(),
  finished_at: z.date().nullable(),
});
export type DeliveryRow = z.infer<typeof deliveryRow>;

export const deliveryColumns = sql.fragment`id, webhook_id, event, source_key, payload, status, attempts, response_status, error, job_id,
  created_at, last_attempt_at, delivered_at, finished_at`;

/**
 * Records a delivery of `payload` to `webhook` and enqueues its job, unless this source
 * was already delivered to it; returns the delivery id, or null for a duplicate.
 */
export async function scheduleDelivery(
  tx: CommonQueryMethods,
  webhook: Pick<WebhookRow, "id" | "project_id" | "user_id">,
  sourceKey: string,
  payload: WebhookPayload,
): Promise<number | null> {
  const id = await tx.maybeOneFirst(sql.type(z.object({ id: z.number() }))`
    insert into webhook_deliveries (webhook_id, event, source_key, payload)
    values (${webhook.id}, ${payload.event}, ${sourceKey}, ${sql.jsonb(payload as never)})
    on conflict (webhook_id, source_key) do nothing
    returning id`);
  if (id === null) return null;
  const job = await enqueue(tx, webhooksDeliver, { delivery_id: id }, { userId: webhook.user_id, projectId: webhook.project_id });
  await tx.query(sql.type(z.object({}))`update webhook_deliveries set job_id = ${job.id} where id = ${id}`);
  return id;
}

/** The newest code generation of a project (for manual and scheduled payloads), or null. */
export async function latestGeneration(conn: CommonQueryMethods, projectId: number): Promise<number | null> {
  return conn.maybeOneFirst(sql.type(z.object({ id: z.number() }))`
    select id from code_generations where project_id = ${projectId} order by id desc limit 1`);
}

/**
 * Fails the delivery that cancelled job `jobId` was queued to make (it would show as pending
 * for good); not counted as a failure of the webhook, whose receiver was never asked.
 */
export async function failCancelledDelivery(conn: CommonQueryMethods, jobId: number): Promise<void> {
  await conn.query(sql.type(z.object({}))`
    update webhook_deliveries set status = 'failed', error = 'The delivery job was cancelled before it ran.', finished_at = now()
    where job_id = ${jobId} and status = 'pending'`);
}
