/**
 * The card processor: Stripe through the `stripe` package, pointed at STRIPE_API_BASE (tests
 * use a loopback stand-in). PaymentIntents carry our transaction id in their metadata and are
 * created with an idempotency key per transaction, so a retried request never charges twice.
 */
import type Stripe from "stripe";
import type { Config } from "../config.ts";
import { providerFailed, providerUnavailable } from "./providers.ts";

const clients = new Map<string, Stripe>();
let stripePackage: Promise<typeof Stripe> | undefined;

/**
 * The Stripe client for this configuration. The `stripe` package (some 200 modules) is loaded
 * on first use, so a process that never takes a card payment does not parse it at start.
 * @throws 503 when STRIPE_SECRET_KEY is unset.
 */
export async function stripeClient(config: Config): Promise<Stripe> {
  const { secretKey, apiBase } = config.payments.stripe;
  if (!secretKey) throw providerUnavailable("cardprocessor");
  const StripeClient = await (stripePackage ??= import("stripe").then((m) => m.default));
  const cacheKey = `${apiBase} ${secretKey}`;
  let client = clients.get(cacheKey);
  if (!client) {
    const base = new URL(apiBase);
    const protocol = base.protocol === "http:" ? "http" : "https";
    client = new StripeClient(secretKey, {
      host: base.hostname,
      port: base.port || (protocol === "http" ? 80 : 443),
      protocol,
      maxNetworkRetries: 2,
      timeout: 20_000,
      telemetry: false,
    });
    clients.set(cacheKey, client);
  }
  return client;
}

/** What the client needs to confirm a card payment. */
export interface CardPayment {
  paymentIntentId: string;
  clientSecret: string;
}

/**
 * Creates the PaymentIntent of transaction `transactionId`.
 * @throws 503 when the card processor is off, 502 when it refuses.
 */
export async function createPaymentIntent(
  config: Config,
  input: { transactionId: number; amountCents: number; currency: string; customerEmail: string; description: string },
): Promise<CardPayment> {
  const stripe = await stripeClient(config);
  try {
    const intent = await stripe.paymentIntents.create(
      {
        amount: input.amountCents,
        currency: input.currency.toLowerCase(),
        description: input.description,
        receipt_email: input.customerEmail,
        metadata: { transaction_id: String(input.transactionId) },
        automatic_payment_methods: { enabled: true },
      },
      { idempotencyKey: `credit-transaction-${input.transactionId}` },
    );
    if (!intent.client_secret) throw new Error("the PaymentIntent has no client secret");
    return { paymentIntentId: intent.id, clientSecret: intent.client_secret };
  } catch (error) {
    throw providerFailed((error as Error).message);
  }
}

/**
 * Refunds what is left of PaymentIntent `paymentIntentId` (transaction `transactionId`) under
 * an idempotency key of the transaction, so a retried job refunds once. A payment refunded in
 * full already (by hand in Stripe's dashboard) answers `charge_already_refunded`: that counts
 * as done. Returns the refund's id (null for one refunded before).
 * @throws when Stripe cannot be reached, refuses, or reports the refund failed (the job retries).
 */
export async function refundPaymentIntent(config: Config, input: { paymentIntentId: string; transactionId: number; duplicate: boolean }): Promise<string | null> {
  const stripe = await stripeClient(config);
  try {
    const refund = await stripe.refunds.create(
      { payment_intent: input.paymentIntentId, metadata: { transaction_id: String(input.transactionId) }, ...(input.duplicate ? { reason: "duplicate" as const } : {}) },
      { idempotencyKey: `refund-transaction-${input.transactionId}` },
    );
    if (refund.status === "failed" || refund.status === "canceled") throw new Error(`the refund ${refund.id} ${refund.status}: ${refund.failure_reason ?? "no reason given"}`);
    return refund.id;
  } catch (error) {
    if ((error as { code?: string }).code === "charge_already_refunded") return null;
    throw error;
  }
}

/**
 * Checks a webhook's Stripe-Signature over the raw body and returns the event.
 * @throws Stripe's SignatureVerificationError when it does not verify.
 */
export async function verifyStripeEvent(config: Config, rawBody: Buffer, signature: string): Promise<Stripe.Event> {
  const secret = config.payments.stripe.webhookSecret;
  if (!secret || !config.payments.stripe.secretKey) throw providerUnavailable("cardprocessor");
  return (await stripeClient(config)).webhooks.constructEvent(rawBody, signature, secret);
}

/**
 * A SetupIntent that saves a card for later payments, on the user's Stripe customer
 * (created once per user under an idempotency key of the user id; `customerId` when known).
 * @throws 503 when the card processor is off, 502 when it refuses.
 */
export async function createSetupIntent(config: Config, user: { id: number; email: string; customerId: string | null }): Promise<{ customerId: string; setupIntentId: string; clientSecret: string }> {
  const stripe = await stripeClient(config);
  try {
    const customerId =
      user.customerId ?? (await stripe.customers.create({ email: user.email, metadata: { user_id: String(user.id) } }, { idempotencyKey: `customer-user-${user.id}` })).id;
    const setup = await stripe.setupIntents.create({ customer: customerId, usage: "off_session", automatic_payment_methods: { enabled: true } });
    if (!setup.client_secret) throw new Error("the SetupIntent has no client secret");
    return { customerId, setupIntentId: setup.id, clientSecret: setup.client_secret };
  } catch (error) {
    throw providerFailed((error as Error).message);
  }
}
