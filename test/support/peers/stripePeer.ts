/**
 * A stand-in for the Stripe API endpoints the card processor calls (PaymentIntents,
 * SetupIntents, customers, refunds), driven through the real `stripe` client pointed at it with
 * STRIPE_API_BASE. It parses Stripe's form encoding (`metadata[transaction_id]=7`), honours
 * `Idempotency-Key` as Stripe does (the same key answers the first result), and builds
 * events the way Stripe sends them, signed with the real `generateTestHeaderString`.
 */
import { randomBytes } from "node:crypto";
import Stripe from "stripe";
import { startHttpPeer, type HttpPeer, type PeerRequest, type PeerResponse } from "./httpPeer.ts";

export interface StandInIntent {
  id: string;
  object: "payment_intent";
  amount: number;
  currency: string;
  client_secret: string;
  metadata: Record<string, string>;
  description: string | null;
  status: string;
  latest_charge: string | null;
}

export interface StandInRefund {
  id: string;
  object: "refund";
  amount: number;
  currency: string;
  payment_intent: string;
  reason: string | null;
  metadata: Record<string, string>;
  status: string;
}

export interface StripeStandIn extends HttpPeer {
  secretKey: string;
  webhookSecret: string;
  /** The service's settings that point it at this stand-in (STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET, STRIPE_API_BASE). */
  env: Record<string, string>;
  intents: Map<string, StandInIntent>;
  setupIntents: Map<string, { id: string; client_secret: string; customer: string | null; usage: string }>;
  customers: Map<string, { id: string; email: string | null }>;
  /** Refunds created through the API, by id. */
  refunds: Map<string, StandInRefund>;
  /** The event Stripe sends for `type` about `object`. */
  event(type: string, object: object): { id: string; object: "event"; type: string; api_version: string; created: number; data: { object: object }; livemode: false };
  /** The JSON body and its Stripe-Signature header (`secret`/`timestamp` override for forged ones). */
  signed(event: object, options?: { secret?: string; timestamp?: number }): { body: string; signature: string };
  /** A charge of intent `id`, refunded. */
  refundedCharge(intentId: string): object;
}

const id = (prefix: string) => `${prefix}_${randomBytes(12).toString("hex")}`;

/** Stripe's form encoding back into an object (`a[b]=c` → `{a: {b: "c"}}`). */
export function parseStripeForm(body: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(body)) {
    const path = key.replace(/\]/g, "").split("[");
    let node = out;
    path.forEach((part, i) => {
      if (i === path.length - 1) node[part] = value;
      else node = (node[part] ??= {}) as Record<string, unknown>;
    });
  }
  return out;
}

/** Starts the stand-in. */
export async function startStripeStandIn(): Promise<StripeStandIn> {
  const secretKey = `sk_test_${randomBytes(12).toString("hex")}`;
  const webhookSecret = `whsec_${randomBytes(16).toString("hex")}`;
  const intents = new Map<string, StandInIntent>();
  const setupIntents = new Map<string, { id: string; client_secret: string; customer: string | null; usage: string }>();
  const customers = new Map<string, { id: string; email: string | null }>();
  const refunds = new Map<string, StandInRefund>();
  const byKey = new Map<string, PeerResponse>();
  const stripe = new Stripe(secretKey);
  const form = (request: PeerRequest) => parseStripeForm(request.body.toString());
  const idempotent = (request: PeerRequest, make: () => PeerResponse): PeerResponse => {
    const key = request.headers["idempotency-key"];
    if (typeof key !== "string") return make();
    const cacheKey = `${request.url.pathname} ${key}`;
    const seen = byKey.get(cacheKey);
    if (seen) return { ...seen, headers: { "idempotent-replayed": "true" } };
    const answer = make();
    byKey.set(cacheKey, answer);
    return answer;
  };
  const peer = await startHttpPeer(
    [
      {
        method: "POST",
        pattern: /^\/v1\/payment_intents$/,
        handler: (request) =>
          idempotent(request, () => {
            const body = form(request);
            const amount = Number(body.amount);
            if (!Number.isInteger(amount) || amount < 50) return { status: 400, body: { error: { type: "invalid_request_error", message: "Amount must be at least 50 cents." } } };
            const intentId = id("pi");
            const intent: StandInIntent = {
              id: intentId,
              object: "payment_intent",
              amount,
              currency: String(body.currency),
              client_secret: `${intentId}_secret_${randomBytes(8).toString("hex")}`,
              metadata: (body.metadata ?? {}) as Record<string, string>,
              description: typeof body.description === "string" ? body.description : null,
              status: "requires_payment_method",
              latest_charge: null,
            };
            intents.set(intentId, intent);
            return { status: 200, body: intent };
          }),
      },
      {
        method: "POST",
        pattern: /^\/v1\/refunds$/,
        handler: (request) =>
          idempotent(request, () => {
            // As Stripe: without `amount`, what is left of the payment; nothing left is charge_already_refunded.
            const body = form(request);
            const intent = intents.get(String(body.payment_intent));
            if (!intent) return { status: 400, body: { error: { type: "invalid_request_error", code: "resource_missing", message: `No such payment_intent: '${String(body.payment_intent)}'` } } };
            const refunded = [...refunds.values()].filter((r) => r.payment_intent === intent.id).reduce((sum, r) => sum + r.amount, 0);
            const amount = body.amount === undefined ? intent.amount - refunded : Number(body.amount);
            if (refunded >= intent.amount) return { status: 400, body: { error: { type: "invalid_request_error", code: "charge_already_refunded", message: "Charge has already been refunded." } } };
            if (!Number.isInteger(amount) || amount <= 0 || amount > intent.amount - refunded) return { status: 400, body: { error: { type: "invalid_request_error", code: "amount_too_large", message: "Refund amount is greater than unrefunded amount on charge." } } };
            const refund: StandInRefund = {
              id: id("re"),
              object: "refund",
              amount,
              currency: intent.currency,
              payment_intent: intent.id,
              reason: typeof body.reason === "string" ? body.reason : null,
              metadata: (body.metadata ?? {}) as Record<string, string>,
              status: "succeeded",
            };
            refunds.set(refund.id, refund);
            return { status: 200, body: refund };
          }),
      },
      {
        method: "POST",
        pattern: /^\/v1\/customers$/,
        handler: (request) =>
          idempotent(request, () => {
            const body = form(request);
            const customer = { id: id("cus"), object: "customer", email: typeof body.email === "string" ? body.email : null };
            customers.set(customer.id, customer);
            return { status: 200, body: customer };
          }),
      },
      {
        method: "POST",
        pattern: /^\/v1\/setup_intents$/,
        handler: (request) =>
          idempotent(request, () => {
            const body = form(request);
            const setupId = id("seti");
            const setup = { id: setupId, object: "setup_intent", client_secret: `${setupId}_secret_${randomBytes(8).toString("hex")}`, customer: typeof body.customer === "string" ? body.customer : null, usage: typeof body.usage === "string" ? body.usage : "off_session", status: "requires_payment_method" };
            setupIntents.set(setupId, setup);
            return { status: 200, body: setup };
          }),
      },
    ],
    (request) =>
      request.headers.authorization === `Bearer ${secretKey}`
        ? null
        : { status: 401, body: { error: { type: "invalid_request_error", message: "Invalid API Key provided." } } },
  );
  return {
    ...peer,
    secretKey,
    webhookSecret,
    env: { STRIPE_SECRET_KEY: secretKey, STRIPE_WEBHOOK_SECRET: webhookSecret, STRIPE_API_BASE: peer.url },
    intents,
    setupIntents,
    customers,
    refunds,
    event: (type, object) => ({ id: id("evt"), object: "event", type, api_version: "2025-01-27", created: Math.floor(Date.now() / 1000), data: { object }, livemode: false }),
    signed: (event, options = {}) => {
      const body = JSON.stringify(event);
      const signature = stripe.webhooks.generateTestHeaderString({
        payload: body,
        secret: options.secret ?? webhookSecret,
        ...(options.timestamp !== undefined ? { timestamp: options.timestamp } : {}),
      });
      return { body, signature };
    },
    refundedCharge: (intentId) => {
      const intent = intents.get(intentId)!;
      return { id: id("ch"), object: "charge", amount: intent.amount, amount_refunded: intent.amount, refunded: true, payment_intent: intentId, metadata: intent.metadata };
    },
  };
}
