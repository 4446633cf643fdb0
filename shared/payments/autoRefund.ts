/**
 * Refunds the service makes by itself. An *undelivered* payment succeeded at its provider but
 * can buy nothing here any more: a plan for a project deleted while the buyer paid, a second
 * period of a plan that another payment started meanwhile (the `subscription_active` check runs
 * when a payment starts, and two started together both pass it), a store template the buyer
 * meanwhile bought through another payment, or a plan or level that no longer exists.
 *
 * The webhook job that meets such a success grants nothing, records the reason on the
 * transaction, queues a payments__refund job and e-mails the buyer, all in its transaction.
 * The refund job asks the provider to refund what is left of the payment (an idempotency key
 * of the transaction, so a retry refunds once) and then applies the refund as the provider's
 * refund webhook would (shared/payments/refunds.ts); that webhook, when it comes, changes nothing.
 * An administrator's refund of a euro store sale (reason `admin_refund`,
 * shared/store/euroPurchases.ts) goes through the same job; it is no undelivered payment, so
 * its buyer gets the `purchase_refunded` receipt (with the credit note) instead of `payment_refunded`.
 */
import { z } from "zod";
import type { Config } from "../config.ts";
import { ignoredRow, sql, type CommonQueryMethods, type DatabasePool } from "../db/pool.ts";
import { enqueue } from "../jobs/enqueue.ts";
import { paymentsRefund } from "../jobs/kinds.ts";
import { enqueueMail } from "../mail/enqueueMail.ts";
import { refundCapture } from "./paypal.ts";
import { refundPayment } from "./refunds.ts";
import { findTransactionForEvent, type TransactionRow } from "./store.ts";
import { refundPaymentIntent } from "./stripe.ts";

/** Why a succeeded payment delivered nothing. */
export type RefundReason = Exclude<NonNullable<TransactionRow["refund_reason"]>, "admin_refund">;

/** The reason in the buyer's e-mail, per language. */
const reasonTexts: Record<"en" | "de", Record<RefundReason, string>> = {
  en: {
    project_deleted: "the project it was for had been deleted before the payment went through",
    subscription_active: "the project already has a running period of this plan, started by another payment",
    already_purchased: "you had already bought this template through another payment",
    item_unavailable: "what it was for is no longer offered",
  },
  de: {
    project_deleted: "das Projekt, für das sie bestimmt war, wurde gelöscht, bevor die Zahlung einging",
    subscription_active: "das Projekt hat bereits einen laufenden Zeitraum dieses Tarifs, den eine andere Zahlung begonnen hat",
    already_purchased: "du hattest diese Vorlage bereits mit einer anderen Zahlung gekauft",
    item_unavailable: "das Gekaufte wird nicht mehr angeboten",
  },
};

const buyerRow = z.object({ email: z.string(), name: z.string(), language: z.string(), item: z.string().nullable() });

/**
 * Runs in the transaction that marks `transaction` succeeded when it delivered nothing:
 * records `reason`, queues the refund and tells the buyer (the e-mail goes out only if this commits).
 */
export async function requestAutomaticRefund(tx: CommonQueryMethods, transaction: TransactionRow, reason: RefundReason): Promise<void> {
  await tx.query(sql.type(ignoredRow)`
    update credit_transactions set refund_reason = ${reason}, refund_requested_at = now(), updated_at = now() where id = ${transaction.id}`);
  await enqueue(tx, paymentsRefund, { transaction_id: transaction.id });
  const buyer = await tx.maybeOne(sql.type(buyerRow)`
    select u.email, u.name, u.language, case ${transaction.kind}
      when 'subscription' then (select pl.name || ' – ' || p.name from plans pl, projects p where pl.id = ${transaction.item_id} and p.id = ${transaction.project_id})
      when 'patron' then (select name from patron_levels where level = ${transaction.item_id})
      when 'store_template' then (select name from store_templates where id = ${transaction.item_id})
    end as item
    from users u where u.id = ${transaction.user_id}`);
  if (!buyer) return;
  const locale = buyer.language === "de" ? "de" : "en";
  // A receipt of money going back, not a notification: sent whatever the buyer's `billing`
  // notification choice, as security mails are (docs/decisions.md).
  await enqueueMail(tx, {
    to: buyer.email,
    kind: "payment_refunded",
    locale,
    params: {
      name: buyer.name,
      item: buyer.item ?? (locale === "de" ? "deinen Kauf" : "your purchase"),
      amount: `${(transaction.amount_cents / 100).toFixed(2)} ${transaction.currency}`,
      reason: reasonTexts[locale][reason],
    },
    userId: transaction.user_id,
  });
}

/** What a refund job did. */
export type AutomaticRefundEffect = "refunded" | "not_requested" | "done_before";

/**
 * The payments__refund job's work for transaction `transactionId`: the provider call first (no
 * transaction held open across it), then the refund applied under the row lock.
 * @throws when the provider cannot be reached or refuses (the job retries with back-off).
 */
export async function issueAutomaticRefund(pool: DatabasePool, config: Config, transactionId: number): Promise<AutomaticRefundEffect> {
  const transaction = await findTransactionForEvent(pool, { id: transactionId }, false);
  if (!transaction || transaction.refund_reason === null) return "not_requested";
  if (transaction.status === "refunded") return "done_before";
  let refundId: string | null;
  if (transaction.payment_method === "cardprocessor") {
    if (!transaction.provider_payment_id) throw new Error(`transaction ${transactionId} has no PaymentIntent to refund`);
    refundId = await refundPaymentIntent(config, {
      paymentIntentId: transaction.provider_payment_id,
      transactionId,
      duplicate: transaction.refund_reason === "already_purchased" || transaction.refund_reason === "subscription_active",
    });
  } else {
    if (!transaction.provider_capture_id) throw new Error(`transaction ${transactionId} has no capture to refund`);
    refundId = await refundCapture(config, transaction.provider_capture_id, transactionId);
  }
  return pool.transaction(async (tx) => {
    const locked = await findTransactionForEvent(tx, { id: transactionId });
    if (!locked) return "not_requested";
    if (refundId !== null) {
      await tx.query(sql.type(ignoredRow)`update credit_transactions set provider_refund_id = ${refundId}, updated_at = now() where id = ${transactionId}`);
    }
    // The whole of what was left is back: the provider's own refund webhook then changes nothing.
    if ((await refundPayment(tx, locked, null)) === "no_change") return "done_before";
    if (locked.refund_reason === "admin_refund") await tellBuyerOfAdminRefund(tx, locked);
    return "refunded";
  });
}

const refundedSaleRow = z.object({ email: z.string(), name: z.string(), language: z.string(), item: z.string(), credit_note: z.string().nullable() });

/**
 * The receipt of an administrator's refund of a store sale (in the transaction that applied
 * it, `transaction` as before it): what was left of the payment, now refunded, and its credit note. A receipt of money, so it is sent whatever the
 * buyer's notification choices, as `payment_refunded` is; not to a closed account.
 */
async function tellBuyerOfAdminRefund(tx: CommonQueryMethods, transaction: TransactionRow): Promise<void> {
  const sale = await tx.maybeOne(sql.type(refundedSaleRow)`
    select u.email, u.name, u.language, coalesce((select name from store_templates where id = ${transaction.item_id}), 'a store template') as item,
      (select number from credit_notes where transaction_id = ${transaction.id} order by id desc limit 1) as credit_note
    from users u where u.id = ${transaction.user_id}`);
  if (!sale) return;
  await enqueueMail(tx, {
    to: sale.email,
    kind: "purchase_refunded",
    locale: sale.language,
    params: { name: sale.name, item: sale.item, amount: `${((transaction.amount_cents - transaction.refunded_cents) / 100).toFixed(2)} ${transaction.currency}`, credit_note: sale.credit_note ?? "" },
    userId: transaction.user_id,
  });
}
