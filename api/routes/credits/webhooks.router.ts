/**
 * Inbound payment webhooks (spec "Inbound webhooks"): public, exempt from the per-IP rate
 * limit, read as raw bytes so the provider's signature is checked over exactly what was
 * sent. A verified event is recorded with the job that applies it and answered 200 at once;
 * a redelivered event id answers 200 and changes nothing. Anything unverified answers 400.
 */
import { z } from "zod";
import { AppError } from "../../../shared/errors.ts";
import { recordPaymentEvent } from "../../../shared/payments/events.ts";
import { verifyPaypalWebhook } from "../../../shared/payments/paypal.ts";
import { providerUnavailable } from "../../../shared/payments/providers.ts";
import { verifyStripeEvent } from "../../../shared/payments/stripe.ts";
import type { AppContext } from "../../context.ts";
import { defineRoute } from "../route.ts";

const maxBytes = 1024 * 1024;
const received = z.object({ received: z.literal(true), duplicate: z.boolean() });
const badSignature = () => new AppError(400, "invalid_signature", "The webhook signature could not be verified.");

async function rawBody(ctx: AppContext): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new AppError(413, "payload_too_large", "The webhook body is too large.");
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

const responses = {
  200: { description: "Recorded (or seen before)", schema: received },
  400: { description: "Signature missing or not valid; nothing changed" },
  503: { description: "The provider is not configured" },
};

const cardProcessor = defineRoute({
  method: "post",
  path: "/cardprocessor/webhook",
  summary: "Card processor (Stripe) events",
  description:
    "Verified with the `Stripe-Signature` header and `STRIPE_WEBHOOK_SECRET` over the raw body (timestamps older than five minutes are refused). Handles `payment_intent.succeeded`, `payment_intent.payment_failed`, `charge.refunded` (partial refunds too) and `setup_intent.succeeded` (a saved card); other types are recorded and ignored.",
  tags: ["Payments"],
  auth: "public",
  unlimited: true,
  responses,
  handler: async (ctx) => {
    const { config, pool } = ctx.deps;
    if (!config.payments.stripe.secretKey || !config.payments.stripe.webhookSecret) throw providerUnavailable("cardprocessor");
    const body = await rawBody(ctx);
    const signature = ctx.get("stripe-signature");
    if (!signature) throw badSignature();
    let event;
    try {
      event = await verifyStripeEvent(config, body, signature);
    } catch {
      throw badSignature();
    }
    const fresh = await recordPaymentEvent(pool, "cardprocessor", { id: event.id, type: event.type, payload: event });
    ctx.body = { received: true, duplicate: !fresh };
  },
});

const paypalEvent = z.object({ id: z.string().min(1).max(255), event_type: z.string().min(1).max(255), resource: z.unknown() }).loose();

const walletProvider = defineRoute({
  method: "post",
  path: "/walletprovider/webhook",
  summary: "Wallet provider (PayPal) events",
  description:
    "Verified by asking the wallet provider (verify-webhook-signature with the `PAYPAL-*` transmission headers and `PAYPAL_WEBHOOK_ID`). Handles `CHECKOUT.ORDER.APPROVED` (captures the order), `PAYMENT.CAPTURE.COMPLETED`, `PAYMENT.CAPTURE.DENIED` and `PAYMENT.CAPTURE.REFUNDED`; other types are recorded and ignored.",
  tags: ["Payments"],
  auth: "public",
  unlimited: true,
  responses: { ...responses, 502: { description: "The provider could not be asked to verify; it will redeliver" } },
  handler: async (ctx) => {
    const { config, pool } = ctx.deps;
    const { paypal } = config.payments;
    if (!paypal.clientId || !paypal.clientSecret || !paypal.webhookId) throw providerUnavailable("walletprovider");
    const body = await rawBody(ctx);
    let parsed: z.infer<typeof paypalEvent>;
    let event: unknown;
    try {
      // The event goes to verification as sent (zod's output would reorder its keys).
      event = JSON.parse(body.toString("utf8"));
      parsed = paypalEvent.parse(event);
    } catch {
      throw badSignature();
    }
    let verified: boolean;
    try {
      verified = await verifyPaypalWebhook(config, ctx.req.headers, event);
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw new AppError(502, "payment_provider_error", "The wallet provider could not be asked to verify the event.");
    }
    if (!verified) throw badSignature();
    const fresh = await recordPaymentEvent(pool, "walletprovider", { id: parsed.id, type: parsed.event_type, payload: event });
    ctx.body = { received: true, duplicate: !fresh };
  },
});

export const paymentWebhookRoutes = [cardProcessor, walletProvider];
