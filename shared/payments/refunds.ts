/**
 * Refunds of payments, whole or partial. A provider reports the cents refunded so far (its
 * running total); the transaction keeps that total in `refunded_cents`, and its credits are
 * taken back in the same proportion (rounded down, so a buyer never loses more than the share
 * refunded), each step once under its own ledger key. Only when all of the amount is back is
 * the payment `refunded` and what it bought (a period, a store purchase) taken back too. A
 * partial refund reported before the payment's success waits for it (applyEarlierRefund).
 * Each step of the total that applies to an invoiced payment gets its credit note in the same
 * transaction (shared/billing/creditNotes.ts); a payment refunded before it was invoiced gets none.
 */
import { issueCreditNote } from "../billing/creditNotes.ts";
import { reverseCredits } from "../credits/ledger.ts";
import { ignoredRow, sql, type CommonQueryMethods } from "../db/pool.ts";
import type { TransactionRow } from "./store.ts";
import { afterPartialRefund, afterPaymentRefunded } from "./succeeded.ts";

/** What a refund event did. */
export type RefundEffect = "refunded" | "partially_refunded" | "no_change";

/** Credits a refund of `refundedCents` out of the payment takes back. */
const creditsFor = (transaction: TransactionRow, refundedCents: number) =>
  refundedCents >= transaction.amount_cents ? transaction.credits : Math.floor((transaction.credits * refundedCents) / transaction.amount_cents);

/**
 * Takes back the credits of the share refunded between running totals `fromCents` and
 * `toCents` of `transaction`; returns what the balance lacked (shortfall).
 */
async function takeBackShare(tx: CommonQueryMethods, transaction: TransactionRow, fromCents: number, toCents: number): Promise<number> {
  const credits = creditsFor(transaction, toCents) - creditsFor(transaction, fromCents);
  if (credits <= 0) return 0;
  const reversal = await reverseCredits(tx, {
    userId: transaction.user_id,
    amount: credits,
    reason: "payment_refunded",
    referenceType: "credit_transaction",
    referenceId: String(transaction.id),
    // The whole refund keeps the key it always had; each partial total has its own.
    idempotencyKey: toCents >= transaction.amount_cents ? `credit-transaction-refund:${transaction.id}` : `credit-transaction-refund:${transaction.id}:${toCents}`,
  });
  return reversal.notTaken;
}

/**
 * Applies a refund of `transaction` (row-locked) whose running total is `refundedCents`
 * (null when the provider does not say: the whole amount). A total not above the one already
 * applied changes nothing (a late or repeated event).
 */
export async function refundPayment(tx: CommonQueryMethods, transaction: TransactionRow, refundedCents: number | null): Promise<RefundEffect> {
  const total = Math.min(transaction.amount_cents, refundedCents ?? transaction.amount_cents);
  if (transaction.status === "refunded" || total <= transaction.refunded_cents) return "no_change";
  const whole = total >= transaction.amount_cents;
  if (transaction.status !== "succeeded") {
    // Providers do not promise order: the refund came before the success it follows. A whole
    // refund ends the payment refunded with nothing granted, and the late success finds
    // nothing to do; a partial one is only recorded, and the success grants the payment and
    // takes back this share at once (applyEarlierRefund), as if they had come in order.
    await tx.query(sql.type(ignoredRow)`
      update credit_transactions set status = ${whole ? "refunded" : transaction.status},
        succeeded_at = case when ${whole} then coalesce(succeeded_at, now()) else succeeded_at end, refunded_at = now(),
        refunded_cents = ${total}, failure_reason = case when ${whole} then null else failure_reason end, updated_at = now()
      where id = ${transaction.id}`);
    return whole ? "refunded" : "partially_refunded";
  }
  const notTaken = await takeBackShare(tx, transaction, transaction.refunded_cents, total);
  await tx.query(sql.type(ignoredRow)`
    update credit_transactions set status = ${whole ? "refunded" : "succeeded"}, refunded_at = now(), refunded_cents = ${total},
      refund_shortfall = refund_shortfall + ${notTaken}, updated_at = now()
    where id = ${transaction.id}`);
  await issueCreditNote(tx, transaction.id, transaction.refunded_cents, total);
  if (whole) await afterPaymentRefunded(tx, transaction);
  else await afterPartialRefund(tx, transaction, transaction.refunded_cents, total);
  return whole ? "refunded" : "partially_refunded";
}

/**
 * Runs in the transaction that marks `transaction` succeeded, after its credits were granted
 * and its invoice issued: the share of a partial refund that arrived before the success is
 * taken back now, and gets its credit note.
 */
export async function applyEarlierRefund(tx: CommonQueryMethods, transaction: TransactionRow): Promise<void> {
  if (transaction.refunded_cents <= 0) return;
  await issueCreditNote(tx, transaction.id, 0, transaction.refunded_cents);
  const notTaken = await takeBackShare(tx, transaction, 0, transaction.refunded_cents);
  if (notTaken > 0) {
    await tx.query(sql.type(ignoredRow)`update credit_transactions set refund_shortfall = refund_shortfall + ${notTaken}, updated_at = now() where id = ${transaction.id}`);
  }
}
