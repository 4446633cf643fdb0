/**
 * What else a succeeded payment does besides crediting: the invoice. Kept apart so the
 * billing area can grow without touching the event handling.
 */
import type { CommonQueryMethods } from "../db/pool.ts";
import { completeEuroPurchase, refundEuroPurchase } from "../store/euroPurchases.ts";
import type { TransactionRow } from "./store.ts";

/** Runs in the transaction that marks `transaction` succeeded. */
export async function afterPaymentSucceeded(tx: CommonQueryMethods, transaction: TransactionRow): Promise<void> {
  if (transaction.kind === "store_template") await completeEuroPurchase(tx, transaction);
  // Invoices are written here once the billing area exists (migration 0023).
}

/** Runs in the transaction that marks `transaction` refunded. */
export async function afterPaymentRefunded(tx: CommonQueryMethods, transaction: TransactionRow): Promise<void> {
  if (transaction.kind === "store_template") await refundEuroPurchase(tx, transaction);
}
