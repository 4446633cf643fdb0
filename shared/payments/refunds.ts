/**
 * Refunds of payments, whole or partial. A provider reports the cents refunded so far (its
 * running total); the transaction keeps that total in `refunded_cents`, and its credits are
 * taken back in the same proportion (rounded down, so a buyer never loses more than the share
 * refunded), each step once under its own ledger key. Only when all of the amount is back is
 * the payment `refunded` and what it bought (a period, a store purchase) taken back too.
 */
import { reverseCredits } from "../credits/ledger.ts";
import { ignoredRow, sql, type CommonQueryMethods } from "../db/pool.ts";
import type { TransactionRow } from "./store.ts";
import { afterPaymentRefunded } from "./succeeded.ts";

/** What a refund event did. */
export type RefundEffect = "refunded" | "partially_refunded" | "no_change";

/** Credits a refund of `refundedCents` out of the payment takes back. */
const creditsFor = (transaction: TransactionRow, refundedCents: number) =>
  refundedCents >= transaction.amount_cents ? transaction.credits : Math.floor((transaction.credits * refundedCents) / transaction.amount_cents);

/**
 * Applies a refund of `transaction` (row-locked) whose running total is `refundedCents`
 * (null when the provider does not say: the whole amount). A total not above the one already
 * applied changes nothing (a late or repeated event).
 */
export async function refundPayment(tx: CommonQueryMethods, transaction: TransactionRow, refundedCents: number | null): Promise<RefundEffect> {
  const total = Math.min(transaction.amount_cents, refundedCents ?? transaction.amount_cents);
  if (transaction.status === "refunded" || total <= transaction.refunded_cents) return "no_change";
  if (transaction.status !== "succeeded") {
    // Providers do not promise order: the refund came before the success it follows. The
    // payment ends refunded with nothing granted, and the late success finds nothing to do.
    await tx.query(sql.type(ignoredRow)`
      update credit_transactions set status = 'refunded', succeeded_at = coalesce(succeeded_at, now()), refunded_at = now(),
        refunded_cents = amount_cents, failure_reason = null, updated_at = now()
      where id = ${transaction.id}`);
    return "refunded";
  }
  const whole = total >= transaction.amount_cents;
  const credits = creditsFor(transaction, total) - creditsFor(transaction, transaction.refunded_cents);
  let notTaken = 0;
  if (credits > 0) {
    const reversal = await reverseCredits(tx, {
      userId: transaction.user_id,
      amount: credits,
      reason: "payment_refunded",
      referenceType: "credit_transaction",
      referenceId: String(transaction.id),
      // The whole refund keeps the key it always had; each partial total has its own.
      idempotencyKey: whole ? `credit-transaction-refund:${transaction.id}` : `credit-transaction-refund:${transaction.id}:${total}`,
    });
    notTaken = reversal.notTaken;
  }
  await tx.query(sql.type(ignoredRow)`
    update credit_transactions set status = ${whole ? "refunded" : "succeeded"}, refunded_at = now(), refunded_cents = ${total},
      refund_shortfall = refund_shortfall + ${notTaken}, updated_at = now()
    where id = ${transaction.id}`);
  if (whole) await afterPaymentRefunded(tx, transaction);
  return whole ? "refunded" : "partially_refunded";
}
