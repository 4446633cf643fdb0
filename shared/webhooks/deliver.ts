/**
 * One attempt of a webhook delivery (the `webhooks__deliver` job): POST the signed payload
 * to the webhook's URL through the guarded fetch (the network guard checks the address
 * when the connection opens; redirects are not followed), with a timeout.
 *
 * A 2xx answer delivers it and resets the webhook's failure count. Anything else is retried
 * by the job with graphile-worker's exponential back-off (e^n seconds: about 3 s, 7 s,
 * 20 s, 55 s, 2.5 min, 7 min, 18 min) until WEBHOOK_MAX_ATTEMPTS (at most 8) are used; then
 * the delivery is `failed` and counts as one failure of the webhook, which is deactivated
 * after WEBHOOK_DEACTIVATE_AFTER_FAILURES failed deliveries in a row. A target the network
 * guard refuses fails at once. A delivery of a deleted project is not sent (projectDeleted.ts).
 */
import { z } from "zod";
import type { Config } from "../config.ts";
import { openText } from "../crypto.ts";
import { ignoredRow, sql, type DatabasePool } from "../db/pool.ts";
import { PermanentJobError } from "../jobs/errors.ts";
import { createGuardedFetch } from "../net/guardedFetch.ts";
import { HostLookupError, NetworkTargetError, networkPolicy } from "../net/networkGuard.ts";
import { PROJECT_DELETED } from "./projectDeleted.ts";
import { signPayload, type WebhookPayload } from "./signature.ts";
import { deliveryColumns, deliveryRow } from "./store.ts";

/** What a delivery attempt needs from the worker. */
export interface DeliveryContext {
  pool: DatabasePool;
  config: Config;
  attempt: number;
  maxAttempts: number;
  signal: AbortSignal;
}

const USER_AGENT = "SchemaForge-Webhooks/1.0";

/** The outcome of one HTTP attempt. */
interface AttemptResult {
  ok: boolean;
  status: number | null;
  error: string | null;
  /** Retrying cannot help (the target is refused). */
  permanent: boolean;
}

/** POSTs `body` to `url`; never throws. */
async function post(url: string, body: string, headers: Record<string, string>, ctx: DeliveryContext): Promise<AttemptResult> {
  const guarded = createGuardedFetch(networkPolicy(ctx.config));
  try {
    const response = await guarded.fetch(url, {
      method: "POST",
      body,
      headers,
      redirect: "manual",
      signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(ctx.config.webhooks.timeoutMs)]),
    });
    await response.body?.cancel();
    if (response.status >= 200 && response.status < 300) return { ok: true, status: response.status, error: null, permanent: false };
    const redirect = response.status >= 300 && response.status < 400 ? " (redirects are not followed)" : "";
    return { ok: false, status: response.status, error: `The receiver answered HTTP ${response.status}${redirect}.`, permanent: false };
  } catch (error) {
    const inner = error instanceof Error && error.cause instanceof Error ? error.cause : error;
    if (inner instanceof NetworkTargetError) return { ok: false, status: null, error: inner.message, permanent: true };
    if (inner instanceof HostLookupError) return { ok: false, status: null, error: inner.message, permanent: false };
    if (inner instanceof Error && (inner.name === "TimeoutError" || inner.name === "AbortError")) {
      return { ok: false, status: null, error: `No answer within ${ctx.config.webhooks.timeoutMs} ms.`, permanent: false };
    }
    const code = (inner as NodeJS.ErrnoException).code;
    return { ok: false, status: null, error: `The request failed${code ? ` (${code})` : ""}.`, permanent: false };
  } finally {
    await guarded.close();
  }
}

const targetRow = z.object({
  status: z.string(),
  payload: z.record(z.string(), z.unknown()),
  target_url: z.string(),
  secret_key_sealed: z.instanceof(Buffer),
  is_active: z.boolean(),
  project_deleted: z.boolean(),
});

/**
 * Runs one attempt of delivery `id`.
 * @throws Error to have the job retried; PermanentJobError when the delivery failed for good.
 */
export async function deliverOnce(ctx: DeliveryContext, id: number): Promise<{ delivery_id: number; status: string; response_status?: number | null }> {
  const target = await ctx.pool.maybeOne(sql.type(targetRow)`
    select d.status, d.payload, w.target_url, w.secret_key_sealed, w.is_active, p.deleted_at is not null as project_deleted
    from webhook_deliveries d join webhooks w on w.id = d.webhook_id join projects p on p.id = w.project_id where d.id = ${id}`);
  if (!target || target.status === "succeeded" || target.status === "failed") return { delivery_id: id, status: target?.status ?? "gone" };
  if (target.project_deleted) {
    await finish(ctx.pool, id, { ok: false, status: null, error: PROJECT_DELETED, permanent: true }, null);
    throw new PermanentJobError(PROJECT_DELETED, "project_deleted");
  }
  if (!target.is_active) {
    await finish(ctx.pool, id, { ok: false, status: null, error: "The webhook is inactive.", permanent: true }, null);
    throw new PermanentJobError("The webhook is inactive.", "webhook_inactive");
  }
  await ctx.pool.query(sql.type(ignoredRow)`
    update webhook_deliveries set status = 'delivering', attempts = attempts + 1, last_attempt_at = now() where id = ${id}`);
  const { body, signature } = signPayload(target.payload as unknown as WebhookPayload, openText(ctx.config.appKey, target.secret_key_sealed));
  const result = await post(
    target.target_url,
    body,
    {
      "content-type": "application/json",
      "user-agent": USER_AGENT,
      "x-signature-256": `sha256=${signature}`,
      "x-webhook-event": String(target.payload.event),
      "x-webhook-delivery": String(id),
    },
    ctx,
  );
  const final = result.ok || result.permanent || ctx.attempt >= Math.min(ctx.maxAttempts, ctx.config.webhooks.maxAttempts);
  if (!final) {
    await ctx.pool.query(sql.type(ignoredRow)`
      update webhook_deliveries set status = 'pending', response_status = ${result.status}, error = ${result.error} where id = ${id}`);
    throw new Error(`Webhook delivery ${id} attempt ${ctx.attempt} failed: ${result.error ?? "unknown"}`);
  }
  await finish(ctx.pool, id, result, ctx.config.webhooks.deactivateAfterFailures);
  if (!result.ok) throw new PermanentJobError(`Webhook delivery failed after ${ctx.attempt} attempt(s): ${result.error ?? "unknown"}`, "webhook_delivery_failed");
  return { delivery_id: id, status: "succeeded", response_status: result.status };
}

/** Records the final outcome and the webhook's failure count (deactivating it at the limit). */
async function finish(pool: DatabasePool, id: number, result: AttemptResult, deactivateAfter: number | null): Promise<void> {
  await pool.transaction(async (tx) => {
    const delivery = await tx.one(sql.type(deliveryRow)`
      update webhook_deliveries set status = ${result.ok ? "succeeded" : "failed"}, response_status = ${result.status}, error = ${result.error},
        delivered_at = ${result.ok ? sql.fragment`now()` : sql.fragment`null`}, finished_at = now()
      where id = ${id} returning ${deliveryColumns}`);
    if (deactivateAfter === null) return;
    if (result.ok) {
      await tx.query(sql.type(ignoredRow)`update webhooks set consecutive_failures = 0 where id = ${delivery.webhook_id}`);
      return;
    }
    await tx.query(sql.type(ignoredRow)`
      update webhooks set consecutive_failures = consecutive_failures + 1,
        is_active = is_active and consecutive_failures + 1 < ${deactivateAfter},
        deactivated_at = case when is_active and consecutive_failures + 1 >= ${deactivateAfter} then now() else deactivated_at end,
        updated_at = now()
      where id = ${delivery.webhook_id}`);
  });
}
