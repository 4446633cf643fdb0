/**
 * Euro purchases of store templates: the payment is started like a credit package's (a
 * pending transaction first, then the card processor's PaymentIntent or the wallet
 * provider's order), and the provider's webhook records the purchase exactly once, in the
 * transaction that marks the payment succeeded (shared/payments/succeeded.ts). A refunded
 * payment refunds the purchase. An administrator's refund of such a sale is a refund of its
 * payment at the provider (the payments__refund job), which then refunds the purchase.
 */
import { z } from "zod";
import type { Config } from "../config.ts";
import { sql, type CommonQueryMethods, type DatabasePool } from "../db/pool.ts";
import { AppError, conflict, forbidden, notFound } from "../errors.ts";
import { enqueue } from "../jobs/enqueue.ts";
import { paymentsRefund } from "../jobs/kinds.ts";
import { createOrder } from "../payments/paypal.ts";
import { providerConfigured, providerUnavailable, type PaymentMethod } from "../payments/providers.ts";
import { createPaymentIntent } from "../payments/stripe.ts";
import type { RefundReason } from "../payments/autoRefund.ts";
import { findTransactionForEvent, insertTransaction, setTransactionProvider, type TransactionRow } from "../payments/store.ts";
import { assertPortableVersion } from "./portability.ts";
import { findPurchase, refundPurchase } from "./purchases.ts";
import { findVersion } from "./versions.ts";

const template = z.object({ id: z.number(), name: z.string(), seller_id: z.number().nullable(), status: z.string(), price_type: z.string(), price_euro_cents: z.number(), current_version_id: z.number().nullable() });

/**
 * Starts the euro purchase of a store template by `buyer`.
 * @throws 404, 403 own, 409 bought before, a payment still pending or file names that are not portable, 503 provider off, 502 provider refused
 */
export async function startEuroPurchase(
  pool: DatabasePool,
  config: Config,
  buyer: { id: number; email: string },
  storeTemplateId: number,
  method: PaymentMethod,
): Promise<{ transaction: TransactionRow; clientSecret: string | null; approvalUrl: string | null }> {
  if (!providerConfigured(config, method)) throw providerUnavailable(method);
  const transaction = await pool.transaction(async (tx) => {
    // One start at a time per buyer, so two clicks do not open two payments.
    await tx.query(sql.type(z.object({ id: z.number() }))`select id from users where id = ${buyer.id} for update`);
    const row = await tx.maybeOne(sql.type(template)`
      select id, name, seller_id, status, price_type, price_euro_cents, current_version_id from store_templates where id = ${storeTemplateId}`);
    if (!row || row.status !== "published" || row.current_version_id === null) throw notFound("Store template");
    if (row.seller_id === buyer.id) throw forbidden("You cannot buy your own template.");
    if (row.price_type !== "euros") throw new AppError(422, "validation_failed", "This template is not priced in euros.", { payment_method: ["Send payment_method only for euro prices."] });
    if (await findPurchase(tx, buyer.id, row.id)) throw conflict("You already bought this template.", "already_purchased");
    const pending = await tx.exists(sql.type(z.object({ one: z.number() }))`
      select 1 as one from store_payment_intents i join credit_transactions c on c.id = i.transaction_id
      where i.buyer_id = ${buyer.id} and i.store_template_id = ${row.id} and c.status = 'pending' and c.created_at > now() - interval '1 hour'`);
    if (pending) throw conflict("A payment for this template is still pending.", "payment_pending");
    assertPortableVersion((await findVersion(tx, row.current_version_id))!.content, "bought");
    const created = await insertTransaction(tx, {
      user_id: buyer.id,
      kind: "store_template",
      package_id: null,
      item_id: row.id,
      project_id: null,
      payment_method: method,
      credits: 0,
      amount_cents: row.price_euro_cents,
      currency: "EUR",
    });
    await tx.query(sql.type(z.object({}))`
      insert into store_payment_intents (transaction_id, buyer_id, store_template_id, version_id, seller_cents)
      values (${created.id}, ${buyer.id}, ${row.id}, ${row.current_version_id},
        ${Math.floor((row.price_euro_cents * config.store.sellerSharePercent) / 100)})`);
    return { created, name: row.name };
  });
  const { created, name } = transaction;
  try {
    if (method === "cardprocessor") {
      const intent = await createPaymentIntent(config, { transactionId: created.id, amountCents: created.amount_cents, currency: "EUR", customerEmail: buyer.email, description: `Store template: ${name}` });
      return { transaction: await setTransactionProvider(pool, created.id, { paymentId: intent.paymentIntentId }), clientSecret: intent.clientSecret, approvalUrl: null };
    }
    const order = await createOrder(config, { transactionId: created.id, amountCents: created.amount_cents, currency: "EUR", description: `Store template: ${name}` });
    return { transaction: await setTransactionProvider(pool, created.id, { orderId: order.orderId }), clientSecret: null, approvalUrl: order.approvalUrl };
  } catch (error) {
    await setTransactionProvider(pool, created.id, { failure: (error as Error).message.slice(0, 1000) });
    if (error instanceof AppError) throw error;
    throw new AppError(502, "payment_provider_error", "The payment provider could not be reached.");
  }
}

/**
 * Records the purchase a succeeded store payment paid for (once: the purchase carries the
 * transaction id). Returns why it recorded nothing (the payment is then refunded), or null.
 */
export async function completeEuroPurchase(tx: CommonQueryMethods, transaction: TransactionRow): Promise<RefundReason | null> {
  const intent = await tx.maybeOne(sql.type(z.object({ buyer_id: z.number(), store_template_id: z.number(), version_id: z.number(), seller_cents: z.number(), seller_id: z.number().nullable() }))`
    select i.buyer_id, i.store_template_id, i.version_id, i.seller_cents, st.seller_id
    from store_payment_intents i join store_templates st on st.id = i.store_template_id where i.transaction_id = ${transaction.id}`);
  if (!intent) return "item_unavailable";
  const purchaseId = await tx.maybeOneFirst(sql.type(z.object({ id: z.number() }))`
    insert into store_purchases (buyer_id, store_template_id, version_id, payment_type, price_euro_cents, transaction_id)
    values (${intent.buyer_id}, ${intent.store_template_id}, ${intent.version_id}, 'euros', ${transaction.amount_cents}, ${transaction.id})
    on conflict (buyer_id, store_template_id) where status = 'completed' do nothing returning id`);
  // Bought meanwhile by another payment: the buyer keeps the first purchase, and this payment is refunded.
  if (purchaseId === null) return "already_purchased";
  // A seller who closed their account while the payment ran earns nothing; the buyer still gets the template.
  if (intent.seller_id !== null) {
    await tx.query(sql.type(z.object({}))`
      insert into seller_earnings (seller_id, purchase_id, amount_cents) values (${intent.seller_id}, ${purchaseId}, ${intent.seller_cents})`);
  }
  await tx.query(sql.type(z.object({}))`update store_templates set sales_count = sales_count + 1 where id = ${intent.store_template_id}`);
  return null;
}

/** Refunds the purchase a refunded store payment paid for. */
export async function refundEuroPurchase(tx: CommonQueryMethods, transaction: TransactionRow): Promise<void> {
  const purchaseId = await tx.maybeOneFirst(sql.type(z.object({ id: z.number() }))`select id from store_purchases where transaction_id = ${transaction.id}`);
  if (purchaseId !== null) await refundPurchase(tx, purchaseId);
}

/** What an administrator's refund of a euro sale did. */
export type EuroRefundRequest = "requested" | "requested_before" | "refunded_before";

/**
 * An administrator's refund of euro purchase `purchaseId` (in the caller's transaction): queues
 * the payments__refund job for its payment, which refunds what is left at the provider and then
 * refunds the purchase (access and the seller's pending earning) with a credit note. The buyer
 * keeps access until the provider confirms, so they never lose it without the money back.
 * @throws 404 no such purchase, 409 `refund_at_provider` when this service cannot refund the
 * payment (its provider is not configured here, or the payment has no provider id to refund)
 */
export async function requestEuroRefund(tx: CommonQueryMethods, config: Config, purchaseId: number, adminId: number): Promise<EuroRefundRequest> {
  const purchase = await tx.maybeOne(sql.type(z.object({ status: z.string(), transaction_id: z.number().nullable() }))`
    select status, transaction_id from store_purchases where id = ${purchaseId} for update`);
  if (!purchase) throw notFound("Purchase");
  if (purchase.status === "refunded") return "refunded_before";
  const transaction = purchase.transaction_id === null ? null : await findTransactionForEvent(tx, { id: purchase.transaction_id });
  if (transaction?.status === "refunded") return "refunded_before";
  if (transaction?.refund_reason) return "requested_before";
  const refundable =
    transaction !== null &&
    transaction.status === "succeeded" &&
    providerConfigured(config, transaction.payment_method) &&
    (transaction.payment_method === "cardprocessor" ? transaction.provider_payment_id !== null : transaction.provider_capture_id !== null);
  if (!refundable) {
    throw conflict("This payment cannot be refunded from here: refund it at the payment provider; its refund webhook then refunds the purchase.", "refund_at_provider");
  }
  await tx.query(sql.type(z.object({}))`
    update credit_transactions set refund_reason = 'admin_refund', refund_requested_at = now(), refund_requested_by = ${adminId}, updated_at = now()
    where id = ${transaction.id}`);
  await enqueue(tx, paymentsRefund, { transaction_id: transaction.id });
  return "requested";
}
