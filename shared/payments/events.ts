/**
 * Inbound payment events. The webhook route verifies an event and records it in
 * `payment_events` (unique per provider and event id) together with the job that applies
 * it; a redelivery finds the row and changes nothing. The job applies the event's effect and
 * marks the row processed in one transaction, so an event has its effect exactly once.
 *
 * Card processor (Stripe): payment_intent.succeeded credits the package,
 * payment_intent.payment_failed fails the transaction, charge.refunded reverses the credits
 * (partial refunds in proportion, shared/payments/refunds.ts), setup_intent.succeeded records
 * a saved card.
 * Wallet provider (PayPal): CHECKOUT.ORDER.APPROVED captures the order,
 * PAYMENT.CAPTURE.COMPLETED credits, PAYMENT.CAPTURE.DENIED fails, PAYMENT.CAPTURE.REFUNDED
 * reverses. Other types are recorded as ignored. Providers do not promise the order of their
 * events: a whole refund that comes before its payment's success ends the payment refunded, and
 * the success then changes nothing; a partial one is taken back when the success arrives.
 */
import { z } from "zod";
import type { Config } from "../config.ts";
import { grantCredits } from "../credits/ledger.ts";
import { ignoredRow, sql, type CommonQueryMethods, type DatabasePool } from "../db/pool.ts";
import { enqueue } from "../jobs/enqueue.ts";
import { paymentsProcess } from "../jobs/kinds.ts";
import type { Logger } from "../logger.ts";
import { captureOrder } from "./paypal.ts";
import type { PaymentMethod } from "./providers.ts";
import { findTransactionForEvent, type TransactionRow } from "./store.ts";
import { applyEarlierRefund, refundPayment, type RefundEffect } from "./refunds.ts";
import { afterPaymentSucceeded } from "./succeeded.ts";
import { requestAutomaticRefund } from "./autoRefund.ts";

/** Records a verified event and enqueues its processing; false when it was seen before. */
export async function recordPaymentEvent(pool: DatabasePool, provider: PaymentMethod, event: { id: string; type: string; payload: unknown }): Promise<boolean> {
  return pool.transaction(async (tx) => {
    const id = await tx.maybeOneFirst(sql.type(z.object({ id: z.number() }))`
      insert into payment_events (provider, event_id, event_type, payload)
      values (${provider}, ${event.id}, ${event.type}, ${sql.jsonb(event.payload as never)})
      on conflict (provider, event_id) do nothing returning id`);
    if (id === null) return false;
    await enqueue(tx, paymentsProcess, { payment_event_id: id });
    return true;
  });
}

const eventRow = z.object({ id: z.number(), provider: z.enum(["cardprocessor", "walletprovider"]), event_type: z.string(), payload: z.unknown(), status: z.string() });

const stripeObject = z
  .object({
    id: z.string(),
    metadata: z.record(z.string(), z.string()).nullish(),
    payment_intent: z.string().nullish(),
    last_payment_error: z.object({ message: z.string().optional() }).nullish(),
    /** The customer of a SetupIntent (setup_intent.succeeded: a card saved). */
    customer: z.string().nullish(),
    /** A charge's refunded cents so far (charge.refunded also reports partial refunds). */
    amount_refunded: z.number().int().nonnegative().nullish(),
  })
  .loose();
const paypalResource = z
  .object({
    id: z.string(),
    custom_id: z.string().nullish(),
    supplementary_data: z.object({ related_ids: z.object({ order_id: z.string().optional() }).loose() }).loose().nullish(),
    purchase_units: z.array(z.object({ custom_id: z.string().nullish() }).loose()).nullish(),
    links: z.array(z.object({ rel: z.string(), href: z.string() }).loose()).nullish(),
    /** A refund's running total of the capture refunded so far. */
    seller_payable_breakdown: z.object({ total_refunded_amount: z.object({ value: z.string() }).loose().nullish() }).loose().nullish(),
  })
  .loose();

/** Cents of a PayPal amount value ("12.34"), or null when it is not one. */
function paypalCents(value: string | undefined): number | null {
  if (value === undefined || !/^\d{1,12}(\.\d{1,2})?$/.test(value)) return null;
  return Math.round(Number(value) * 100);
}

/** The capture a PayPal refund belongs to: the id at the end of its `up` link, when it has one. */
function refundedCaptureId(refund: z.infer<typeof paypalResource>): string | null {
  const up = refund.links?.find((link) => link.rel === "up")?.href;
  const id = up?.match(/\/captures\/([^/?#]+)/)?.[1];
  return id ? decodeURIComponent(id) : null;
}

/** The event types that have an effect, per provider. */
const handledTypes: Record<PaymentMethod, readonly string[]> = {
  cardprocessor: ["payment_intent.succeeded", "payment_intent.payment_failed", "charge.refunded", "setup_intent.succeeded"],
  walletprovider: ["PAYMENT.CAPTURE.COMPLETED", "PAYMENT.CAPTURE.DENIED", "PAYMENT.CAPTURE.REFUNDED"],
};

type Effect = "credited" | "refund_requested" | "failed" | "captured" | "card_saved" | "ignored" | "no_transaction" | RefundEffect;

/**
 * Applies recorded event `eventId` once (the job's work). Network calls (capturing an
 * approved order) happen before the transaction; everything written happens in it.
 */
export async function processPaymentEvent(pool: DatabasePool, config: Config, eventId: number, log: Logger): Promise<Effect | "done_before"> {
  const event = await pool.maybeOne(sql.type(eventRow)`select id, provider, event_type, payload, status from payment_events where id = ${eventId}`);
  if (!event || event.status !== "received") return "done_before";
  const data = event.payload as { data?: { object?: unknown }; resource?: unknown };
  if (event.provider === "walletprovider" && event.event_type === "CHECKOUT.ORDER.APPROVED") {
    // Capturing is idempotent at PayPal (PayPal-Request-Id per order); a retry of this job captures once.
    // Only our own pending orders are captured: the account's webhook also reports orders of
    // other integrations, which are theirs to capture.
    const order = paypalResource.parse(data.resource);
    const ours = await findTransactionForEvent(pool, { orderId: order.id }, false);
    if (!ours || ours.status !== "pending") return finish(pool, event.id, async () => (ours ? "no_change" : "no_transaction"));
    const capture = await captureOrder(config, order.id);
    return finish(pool, event.id, async (tx) => {
      const transaction = await findTransactionForEvent(tx, { orderId: order.id });
      if (!transaction) return "no_transaction";
      if (capture.captureId) {
        await tx.query(sql.type(ignoredRow)`update credit_transactions set provider_capture_id = ${capture.captureId}, updated_at = now() where id = ${transaction.id}`);
      }
      return "captured";
    });
  }
  return finish(pool, event.id, async (tx) => {
    // Only the handled types are read: others (balance.available has no id) are ignored unread.
    if (!handledTypes[event.provider].includes(event.event_type)) {
      log.info({ provider: event.provider, event_type: event.event_type }, "payment event type not handled");
      return "ignored";
    }
    if (event.provider === "cardprocessor") {
      const object = stripeObject.parse(data.data?.object);
      if (event.event_type === "setup_intent.succeeded") return cardSaved(tx, object.customer ?? null);
      const byIntent = event.event_type === "charge.refunded" ? object.payment_intent ?? null : object.id;
      const transaction = await findTransactionForEvent(tx, { id: Number(object.metadata?.transaction_id) || null, paymentId: byIntent });
      switch (event.event_type) {
        case "payment_intent.succeeded":
          return transaction ? succeed(tx, transaction) : "no_transaction";
        case "payment_intent.payment_failed":
          return transaction ? fail(tx, transaction, object.last_payment_error?.message ?? "The card payment failed.") : "no_transaction";
        case "charge.refunded":
          return transaction ? refundPayment(tx, transaction, object.amount_refunded ?? null) : "no_transaction";
        default:
          return "ignored";
      }
    }
    const resource = paypalResource.parse(data.resource);
    const customId = resource.custom_id ?? resource.purchase_units?.[0]?.custom_id ?? null;
    const transaction = await findTransactionForEvent(tx, {
      id: Number(customId) || null,
      orderId: resource.supplementary_data?.related_ids.order_id ?? null,
      captureId: event.event_type === "PAYMENT.CAPTURE.REFUNDED" ? refundedCaptureId(resource) : null,
    });
    switch (event.event_type) {
      case "PAYMENT.CAPTURE.COMPLETED":
        return transaction ? succeed(tx, transaction, resource.id) : "no_transaction";
      case "PAYMENT.CAPTURE.DENIED":
        return transaction ? fail(tx, transaction, "The wallet payment was denied.") : "no_transaction";
      case "PAYMENT.CAPTURE.REFUNDED":
        return transaction ? refundPayment(tx, transaction, paypalCents(resource.seller_payable_breakdown?.total_refunded_amount?.value)) : "no_transaction";
      default:
        return "ignored";
    }
  });
}

async function finish(pool: DatabasePool, eventId: number, effect: (tx: CommonQueryMethods) => Promise<Effect>): Promise<Effect | "done_before"> {
  return pool.transaction(async (tx) => {
    // The row lock makes a concurrent second run of the same event wait and then find it done.
    const status = await tx.maybeOneFirst(sql.type(z.object({ status: z.string() }))`select status from payment_events where id = ${eventId} for update`);
    if (status !== "received") return "done_before";
    const result = await effect(tx);
    await tx.query(sql.type(ignoredRow)`
      update payment_events set status = ${result === "ignored" ? "ignored" : "processed"}, error = ${result === "no_transaction" ? "no matching transaction" : null}, processed_at = now()
      where id = ${eventId}`);
    return result;
  });
}

async function succeed(tx: CommonQueryMethods, transaction: TransactionRow, captureId?: string): Promise<Effect> {
  if (transaction.status !== "pending" && transaction.status !== "failed") return "no_change";
  await tx.query(sql.type(ignoredRow)`
    update credit_transactions set status = 'succeeded', succeeded_at = now(), failure_reason = null,
      provider_capture_id = coalesce(${captureId ?? null}, provider_capture_id), updated_at = now()
    where id = ${transaction.id}`);
  // What it bought first: a payment that can deliver nothing is refunded, and grants nothing meanwhile.
  const undelivered = await afterPaymentSucceeded(tx, transaction);
  if (undelivered !== null) {
    await requestAutomaticRefund(tx, transaction, undelivered);
    return "refund_requested";
  }
  if (transaction.credits > 0) {
    await grantCredits(tx, {
      userId: transaction.user_id,
      amount: transaction.credits,
      reason: "package_purchase",
      referenceType: "credit_transaction",
      referenceId: String(transaction.id),
      idempotencyKey: `credit-transaction:${transaction.id}`,
    });
  }
  await applyEarlierRefund(tx, transaction);
  return "credited";
}

/** Records that the user whose card processor customer is `customerId` saved a card. */
async function cardSaved(tx: CommonQueryMethods, customerId: string | null): Promise<Effect> {
  if (!customerId) return "no_change";
  const saved = await tx.anyFirst(sql.type(z.object({ id: z.number() }))`
    update users set payment_method_saved_at = now() where stripe_customer_id = ${customerId} returning id`);
  return saved.length ? "card_saved" : "no_change";
}

async function fail(tx: CommonQueryMethods, transaction: TransactionRow, reason: string): Promise<Effect> {
  if (transaction.status !== "pending") return "no_change";
  await tx.query(sql.type(ignoredRow)`
    update credit_transactions set status = 'failed', failure_reason = ${reason.slice(0, 1000)}, updated_at = now() where id = ${transaction.id}`);
  return "failed";
}
