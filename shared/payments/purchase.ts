/**
 * Buying a credit package with money: a pending transaction is committed first (so its id
 * can travel to the provider and a webhook can always find it), then the provider is asked
 * for a PaymentIntent (card) or an order (wallet) under an idempotency key of that id.
 * Nothing is credited here: the provider's webhook does that (shared/payments/events.ts).
 */
import type { Config } from "../config.ts";
import type { DatabasePool } from "../db/pool.ts";
import { AppError, notFound } from "../errors.ts";
import { createOrder } from "./paypal.ts";
import { providerConfigured, providerUnavailable, type PaymentMethod } from "./providers.ts";
import { createPaymentIntent } from "./stripe.ts";
import { findCreditPackage, insertTransaction, setTransactionProvider, type TransactionRow } from "./store.ts";

/** A started payment: the transaction and what the client needs to complete it. */
export interface StartedPayment {
  transaction: TransactionRow;
  /** Card: the PaymentIntent's client secret for Stripe.js. */
  clientSecret: string | null;
  /** Wallet: where the buyer approves the order. */
  approvalUrl: string | null;
}

/**
 * Starts the purchase of package `packageId` by `user`.
 * @throws 404 (no such active package), 503 (provider off), 502 (provider refused; the
 *   transaction is kept as failed).
 */
export async function purchasePackage(
  pool: DatabasePool,
  config: Config,
  user: { id: number; email: string },
  packageId: number,
  method: PaymentMethod,
): Promise<StartedPayment> {
  if (!providerConfigured(config, method)) throw providerUnavailable(method);
  const pack = await findCreditPackage(pool, packageId);
  if (!pack || !pack.is_active) throw notFound("Credit package");
  const transaction = await insertTransaction(pool, {
    user_id: user.id,
    kind: "credit_package",
    package_id: pack.id,
    item_id: null,
    project_id: null,
    payment_method: method,
    credits: pack.credits,
    amount_cents: pack.price_cents,
    currency: pack.currency,
  });
  const description = `${pack.credits} credits (${pack.name})`;
  try {
    if (method === "cardprocessor") {
      const intent = await createPaymentIntent(config, { transactionId: transaction.id, amountCents: pack.price_cents, currency: pack.currency, customerEmail: user.email, description });
      const saved = await setTransactionProvider(pool, transaction.id, { paymentId: intent.paymentIntentId });
      return { transaction: saved, clientSecret: intent.clientSecret, approvalUrl: null };
    }
    const order = await createOrder(config, { transactionId: transaction.id, amountCents: pack.price_cents, currency: pack.currency, description });
    const saved = await setTransactionProvider(pool, transaction.id, { orderId: order.orderId });
    return { transaction: saved, clientSecret: null, approvalUrl: order.approvalUrl };
  } catch (error) {
    await setTransactionProvider(pool, transaction.id, { failure: (error as Error).message.slice(0, 1000) });
    if (error instanceof AppError) throw error;
    throw new AppError(502, "payment_provider_error", "The payment provider could not be reached.");
  }
}
