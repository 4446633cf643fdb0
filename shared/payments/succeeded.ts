/**
 * What else a succeeded payment does besides crediting: the invoice. Kept apart so the
 * billing area can grow without touching the event handling.
 */
import type { CommonQueryMethods } from "../db/pool.ts";
import type { TransactionRow } from "./store.ts";

/** Runs in the transaction that marks `transaction` succeeded. */
export async function afterPaymentSucceeded(_tx: CommonQueryMethods, _transaction: TransactionRow): Promise<void> {
  // Invoices are written here once the billing area exists (migration 0023).
}
