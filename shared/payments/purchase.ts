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

/** What a payment buys. */
export interface PaymentItem {
  kind: TransactionRow["kind"];
  packageId: number | null;
  /** The plan id (subscription) or patron level (patron). */
  itemId: number | null;
  projectId: number | null;
  /** Credits granted when it succeeds. */
  credits: number;
  amountCents: number;
  currency: string;
  description: string;
}

/**
 * Starts a payment of `item` by `user` through `method`.
 * @throws 503 (provider off), 502 (provider refused; the transaction is kept as failed).
 */
export async function startPayment(pool: DatabasePool, config: Config, user: { id: number; email: string }, method: PaymentMethod, item: PaymentItem): Promise<StartedPayment> {
  if (!providerConfigured(config, method)) throw providerUnavailable(method);
  const transaction = await insertTransaction(pool, {
    user_id: user.id,
    kind: item.kind,
    package_id: item.packageId,
    item_id: item.itemId,
    project_id: item.projectId,
    payment_method: method,
    credits: item.credits,
    amount_cents: item.amountCents,
    currency: item.currency,
  });
  try {
    if (method === "cardprocessor") {
      const intent = await createPaymentIntent(config, { transactionId: transaction.id, amountCents: item.amountCents, currency: item.currency, customerEmail: user.email, description: item.description });
      const saved = await setTransactionProvider(pool, transaction.id, { paymentId: intent.paymentIntentId });
      return { transaction: saved, clientSecret: intent.clientSecret, approvalUrl: null };
    }
    const order = await createOrder(config, { transactionId: transaction.id, amountCents: item.amountCents, currency: item.currency, description: item.description });
    const saved = await setTransactionProvider(pool, transaction.id, { orderId: order.orderId });
    return { transaction: saved, clientSecret: null, approvalUrl: order.approvalUrl };
  } catch (error) {
    await setTransactionProvider(pool, transaction.id, { failure: (error as Error).message.slice(0, 1000) });
    if (error instanceof AppError) throw error;
    throw new AppError(502, "payment_provider_error", "The payment provider could not be reached.");
  }
}

/**
 * Starts the purchase of package `packageId` by `user`.
 * @throws 404 (no such active package), 503 (provider off), 502 (provider refused).
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
  return startPayment(pool, config, user, method, {
    kind: "credit_package",
    packageId: pack.id,
    itemId: null,
    projectId: null,
    credits: pack.credits,
    amountCents: pack.price_cents,
    currency: pack.currency,
    description: `${pack.credits} credits (${pack.name})`,
  });
}
