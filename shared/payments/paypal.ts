/**
 * The wallet provider: PayPal's REST API (Orders v2 and webhook verification), at
 * PAYPAL_API_BASE. Calls authenticate with a client-credentials token (cached until shortly
 * before it expires) and carry `PayPal-Request-Id`, PayPal's idempotency header, so a retried
 * order or capture is the same order or capture.
 */
import { z } from "zod";
import type { Config } from "../config.ts";
import { providerFailed, providerUnavailable } from "./providers.ts";

const tokens = new Map<string, { token: string; expiresAt: number }>();

function settings(config: Config) {
  const { clientId, clientSecret, apiBase, webhookId } = config.payments.paypal;
  if (!clientId || !clientSecret) throw providerUnavailable("walletprovider");
  return { clientId, clientSecret, apiBase, webhookId };
}

async function accessToken(config: Config): Promise<string> {
  const { clientId, clientSecret, apiBase } = settings(config);
  const key = `${apiBase} ${clientId}`;
  const cached = tokens.get(key);
  if (cached && cached.expiresAt > Date.now()) return cached.token;
  const response = await fetch(`${apiBase}/v1/oauth2/token`, {
    method: "POST",
    headers: { authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString("base64")}`, "content-type": "application/x-www-form-urlencoded" },
    body: "grant_type=client_credentials",
    signal: AbortSignal.timeout(20_000),
  });
  if (!response.ok) throw new Error(`token request answered ${response.status}`);
  const body = z.object({ access_token: z.string(), expires_in: z.number() }).parse(await response.json());
  tokens.set(key, { token: body.access_token, expiresAt: Date.now() + Math.max(0, body.expires_in - 60) * 1000 });
  return body.access_token;
}

async function call<T extends z.ZodType>(config: Config, path: string, body: unknown, schema: T, requestId?: string): Promise<z.output<T>> {
  const response = await fetch(`${settings(config).apiBase}${path}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${await accessToken(config)}`,
      "content-type": "application/json",
      ...(requestId ? { "paypal-request-id": requestId } : {}),
    },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${path} answered ${response.status}: ${text.slice(0, 200)}`);
  return schema.parse(JSON.parse(text));
}

const orderSchema = z.object({
  id: z.string(),
  status: z.string(),
  links: z.array(z.object({ href: z.string(), rel: z.string() })).default([]),
});

/** A created order and the page where the buyer approves it. */
export interface WalletOrder {
  orderId: string;
  approvalUrl: string;
}

/**
 * Creates the order of transaction `transactionId` (intent CAPTURE; its `custom_id` is the
 * transaction id). @throws 503 when the wallet provider is off, 502 when it refuses.
 */
export async function createOrder(config: Config, input: { transactionId: number; amountCents: number; currency: string; description: string }): Promise<WalletOrder> {
  try {
    const order = await call(
      config,
      "/v2/checkout/orders",
      {
        intent: "CAPTURE",
        purchase_units: [
          {
            reference_id: `transaction-${input.transactionId}`,
            custom_id: String(input.transactionId),
            description: input.description,
            amount: { currency_code: input.currency, value: (input.amountCents / 100).toFixed(2) },
          },
        ],
      },
      orderSchema,
      `order-transaction-${input.transactionId}`,
    );
    const approve = order.links.find((l) => l.rel === "approve" || l.rel === "payer-action");
    if (!approve) throw new Error("the order has no approval link");
    return { orderId: order.id, approvalUrl: approve.href };
  } catch (error) {
    if ((error as { status?: number }).status === 503) throw error;
    throw providerFailed((error as Error).message);
  }
}

/** Captures an approved order (idempotent per order); returns the capture id when there is one. */
export async function captureOrder(config: Config, orderId: string): Promise<{ status: string; captureId: string | null }> {
  const captured = await call(
    config,
    `/v2/checkout/orders/${encodeURIComponent(orderId)}/capture`,
    {},
    orderSchema.extend({
      purchase_units: z.array(z.object({ payments: z.object({ captures: z.array(z.object({ id: z.string() })).default([]) }).optional() })).default([]),
    }),
    `capture-${orderId}`,
  );
  return { status: captured.status, captureId: captured.purchase_units[0]?.payments?.captures[0]?.id ?? null };
}

/**
 * Refunds what is left of capture `captureId` (transaction `transactionId`; the request id
 * makes a retry the same refund). A capture refunded in full already answers 422
 * CAPTURE_FULLY_REFUNDED: that counts as done. Returns the refund's id (null then).
 * @throws when PayPal cannot be reached, refuses, or reports the refund failed (the job retries).
 */
export async function refundCapture(config: Config, captureId: string, transactionId: number): Promise<string | null> {
  try {
    const refund = await call(config, `/v2/payments/captures/${encodeURIComponent(captureId)}/refund`, {}, z.object({ id: z.string(), status: z.string() }), `refund-transaction-${transactionId}`);
    if (refund.status === "FAILED" || refund.status === "CANCELLED") throw new Error(`the refund ${refund.id} ${refund.status}`);
    return refund.id;
  } catch (error) {
    if ((error as Error).message.includes("CAPTURE_FULLY_REFUNDED")) return null;
    throw error;
  }
}

/** The transmission headers PayPal signs a webhook with. */
export const paypalHeaderNames = ["paypal-auth-algo", "paypal-cert-url", "paypal-transmission-id", "paypal-transmission-sig", "paypal-transmission-time"] as const;

/**
 * Asks PayPal whether a webhook is authentic (verify-webhook-signature with PAYPAL_WEBHOOK_ID).
 * Returns false for a missing header or a FAILURE answer. @throws when PayPal cannot be asked.
 */
export async function verifyPaypalWebhook(config: Config, headers: Record<string, string | string[] | undefined>, event: unknown): Promise<boolean> {
  const { webhookId } = settings(config);
  if (!webhookId) throw providerUnavailable("walletprovider");
  const values: Record<string, string> = {};
  for (const name of paypalHeaderNames) {
    const value = headers[name];
    if (typeof value !== "string" || value.length === 0 || value.length > 2048) return false;
    values[name] = value;
  }
  const answer = await call(
    config,
    "/v1/notifications/verify-webhook-signature",
    {
      auth_algo: values["paypal-auth-algo"],
      cert_url: values["paypal-cert-url"],
      transmission_id: values["paypal-transmission-id"],
      transmission_sig: values["paypal-transmission-sig"],
      transmission_time: values["paypal-transmission-time"],
      webhook_id: webhookId,
      webhook_event: event,
    },
    z.object({ verification_status: z.string() }),
  );
  return answer.verification_status === "SUCCESS";
}
