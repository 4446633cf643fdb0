/**
 * A stand-in for the PayPal REST endpoints the wallet provider calls: the client-credentials
 * token, Orders v2 (create, capture; `PayPal-Request-Id` makes both idempotent as at PayPal),
 * refunds of captures and verify-webhook-signature. It signs the webhooks it sends the way PayPal does: an RSA
 * SHA-256 signature over `transmission_id|transmission_time|webhook_id|crc32(body)`, and the
 * verification call recomputes exactly that, so a tampered event or another webhook id fails.
 */
import { createSign, createVerify, generateKeyPairSync, randomBytes, randomUUID } from "node:crypto";
import { crc32 } from "node:zlib";
import { jsonBody, startHttpPeer, type HttpPeer, type PeerRequest, type PeerResponse } from "./httpPeer.ts";

export interface StandInOrder {
  id: string;
  status: "CREATED" | "APPROVED" | "COMPLETED";
  customId: string;
  amount: { currency_code: string; value: string };
  captureId: string | null;
}

export interface PaypalStandIn extends HttpPeer {
  clientId: string;
  clientSecret: string;
  webhookId: string;
  /** The service's settings that point it at this stand-in (PAYPAL_CLIENT_ID, PAYPAL_CLIENT_SECRET, PAYPAL_WEBHOOK_ID, PAYPAL_API_BASE). */
  env: Record<string, string>;
  orders: Map<string, StandInOrder>;
  /** Captures performed (order id per capture call that did the work). */
  captures: string[];
  /** Refunds performed (whole refunds of captures). */
  refunds: { id: string; captureId: string }[];
  /** A webhook event as PayPal sends it. */
  event(eventType: string, resource: object): { id: string; event_type: string; resource_type: string; create_time: string; resource: object };
  /** The body and transmission headers of `event` (`webhookId` overrides the id signed for). */
  signed(event: object, options?: { webhookId?: string }): { body: string; headers: Record<string, string> };
  /** The capture resource of an order, as in PAYMENT.CAPTURE.* events. */
  captureResource(orderId: string): object;
  /** The refund of the capture of order `orderId`, as PayPal reports it (linked `up` to the capture). */
  refundResource(orderId: string): object;
}

/** Starts the stand-in. */
export async function startPaypalStandIn(): Promise<PaypalStandIn> {
  const clientId = `client-${randomBytes(6).toString("hex")}`;
  const clientSecret = randomBytes(16).toString("hex");
  const webhookId = `WH-${randomBytes(8).toString("hex").toUpperCase()}`;
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const certUrl = "https://api.paypal.stand-in/v1/notifications/certs/CERT-STAND-IN";
  const accessToken = `A21AA${randomBytes(16).toString("hex")}`;
  const orders = new Map<string, StandInOrder>();
  const captures: string[] = [];
  const refunds: { id: string; captureId: string }[] = [];
  const byRequestId = new Map<string, PeerResponse>();
  const idempotent = (request: PeerRequest, make: () => PeerResponse): PeerResponse => {
    const key = request.headers["paypal-request-id"];
    if (typeof key !== "string") return make();
    const cacheKey = `${request.url.pathname} ${key}`;
    const seen = byRequestId.get(cacheKey);
    if (seen) return seen;
    const answer = make();
    byRequestId.set(cacheKey, answer);
    return answer;
  };
  const signedText = (transmissionId: string, time: string, hookId: string, body: string) => `${transmissionId}|${time}|${hookId}|${crc32(Buffer.from(body))}`;
  const orderJson = (order: StandInOrder) => ({
    id: order.id,
    status: order.status,
    purchase_units: [
      { custom_id: order.customId, amount: order.amount, ...(order.captureId ? { payments: { captures: [{ id: order.captureId, status: "COMPLETED", custom_id: order.customId }] } } : {}) },
    ],
    links: [
      { href: `https://www.paypal.stand-in/checkoutnow?token=${order.id}`, rel: "approve", method: "GET" },
      { href: `https://api.paypal.stand-in/v2/checkout/orders/${order.id}`, rel: "self", method: "GET" },
    ],
  });

  const peer = await startHttpPeer(
    [
      {
        method: "POST",
        pattern: /^\/v1\/oauth2\/token$/,
        handler: () => ({ status: 200, body: { access_token: accessToken, token_type: "Bearer", expires_in: 32400, app_id: "APP-STAND-IN" } }),
      },
      {
        method: "POST",
        pattern: /^\/v2\/checkout\/orders$/,
        handler: (request) =>
          idempotent(request, () => {
            const body = jsonBody<{ intent?: string; purchase_units?: { custom_id?: string; amount?: { currency_code: string; value: string } }[] }>(request);
            const unit = body.purchase_units?.[0];
            if (body.intent !== "CAPTURE" || !unit?.amount) return { status: 422, body: { name: "UNPROCESSABLE_ENTITY", message: "intent and amount are required" } };
            const order: StandInOrder = { id: randomBytes(9).toString("hex").toUpperCase(), status: "CREATED", customId: unit.custom_id ?? "", amount: unit.amount, captureId: null };
            orders.set(order.id, order);
            return { status: 201, body: orderJson(order) };
          }),
      },
      {
        method: "POST",
        pattern: /^\/v2\/checkout\/orders\/(?<id>[A-Z0-9]+)\/capture$/,
        handler: (request) =>
          idempotent(request, () => {
            const order = orders.get(request.params.id!);
            if (!order) return { status: 404, body: { name: "RESOURCE_NOT_FOUND" } };
            if (order.status === "COMPLETED") return { status: 422, body: { name: "UNPROCESSABLE_ENTITY", details: [{ issue: "ORDER_ALREADY_CAPTURED" }] } };
            order.status = "COMPLETED";
            order.captureId = randomBytes(8).toString("hex").toUpperCase();
            captures.push(order.id);
            return { status: 201, body: orderJson(order) };
          }),
      },
      {
        method: "POST",
        pattern: /^\/v2\/payments\/captures\/(?<id>[A-Z0-9]+)\/refund$/,
        handler: (request) =>
          idempotent(request, () => {
            // An empty body refunds what is left of the capture, as at PayPal.
            const captureId = request.params.id!;
            if (![...orders.values()].some((o) => o.captureId === captureId)) return { status: 404, body: { name: "RESOURCE_NOT_FOUND" } };
            if (refunds.some((r) => r.captureId === captureId)) return { status: 422, body: { name: "UNPROCESSABLE_ENTITY", details: [{ issue: "CAPTURE_FULLY_REFUNDED" }] } };
            const refund = { id: randomBytes(8).toString("hex").toUpperCase(), captureId };
            refunds.push(refund);
            return { status: 201, body: { id: refund.id, status: "COMPLETED", links: [{ rel: "up", href: `https://api.paypal.stand-in/v2/payments/captures/${captureId}`, method: "GET" }] } };
          }),
      },
      {
        method: "POST",
        pattern: /^\/v1\/notifications\/verify-webhook-signature$/,
        handler: (request) => {
          const body = jsonBody<Record<string, unknown>>(request);
          const verify = createVerify("sha256");
          verify.update(signedText(String(body.transmission_id), String(body.transmission_time), String(body.webhook_id), JSON.stringify(body.webhook_event)));
          let ok: boolean;
          try {
            ok = body.auth_algo === "SHA256withRSA" && body.cert_url === certUrl && verify.verify(publicKey, String(body.transmission_sig), "base64");
          } catch {
            ok = false;
          }
          return { status: 200, body: { verification_status: ok ? "SUCCESS" : "FAILURE" } };
        },
      },
    ],
    (request) => {
      const auth = request.headers.authorization ?? "";
      if (request.url.pathname === "/v1/oauth2/token") {
        return auth === `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString("base64")}` ? null : { status: 401, body: { error: "invalid_client" } };
      }
      return auth === `Bearer ${accessToken}` ? null : { status: 401, body: { name: "AUTHENTICATION_FAILURE" } };
    },
  );
  return {
    ...peer,
    clientId,
    clientSecret,
    webhookId,
    env: { PAYPAL_CLIENT_ID: clientId, PAYPAL_CLIENT_SECRET: clientSecret, PAYPAL_WEBHOOK_ID: webhookId, PAYPAL_API_BASE: peer.url },
    orders,
    captures,
    refunds,
    event: (eventType, resource) => ({ id: `WH-${randomUUID()}`, event_type: eventType, resource_type: "capture", create_time: new Date().toISOString(), resource }),
    signed: (event, options = {}) => {
      const body = JSON.stringify(event);
      const transmissionId = randomUUID();
      const time = new Date().toISOString();
      const sign = createSign("sha256");
      sign.update(signedText(transmissionId, time, options.webhookId ?? webhookId, body));
      return {
        body,
        headers: {
          "paypal-auth-algo": "SHA256withRSA",
          "paypal-cert-url": certUrl,
          "paypal-transmission-id": transmissionId,
          "paypal-transmission-sig": sign.sign(privateKey, "base64"),
          "paypal-transmission-time": time,
        },
      };
    },
    refundResource: (orderId) => {
      const order = orders.get(orderId)!;
      return {
        id: `REFUND-${randomBytes(6).toString("hex").toUpperCase()}`,
        status: "COMPLETED",
        custom_id: order.customId,
        amount: order.amount,
        links: [{ rel: "up", href: `${peer.url}/v2/payments/captures/${order.captureId ?? "UNCAPTURED"}`, method: "GET" }],
      };
    },
    captureResource: (orderId) => {
      const order = orders.get(orderId)!;
      return {
        id: order.captureId ?? "UNCAPTURED",
        status: "COMPLETED",
        custom_id: order.customId,
        amount: order.amount,
        supplementary_data: { related_ids: { order_id: order.id } },
      };
    },
  };
}
