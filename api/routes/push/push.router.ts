/**
 * Web Push: GET /push/vapid-public-key (the application server key a browser subscribes
 * with), POST /push/subscribe (the browser's PushSubscription) and /push/unsubscribe.
 * Deliveries are the push__send job's (shared/notifications/notify.ts queues it).
 */
import { z } from "zod";
import { AppError, invalidField, notFound } from "../../../shared/errors.ts";
import { pushEnabled } from "../../../shared/push/send.ts";
import { deleteSubscription, upsertSubscription } from "../../../shared/push/store.ts";
import type { Config } from "../../../shared/config.ts";
import { currentUser } from "../../context.ts";
import { defineRoute } from "../route.ts";
import { subscribeBody, subscriptionResource, unsubscribeBody } from "./push.schema.ts";

function requirePush(config: Config): void {
  if (!pushEnabled(config)) throw new AppError(503, "push_unavailable", "Push notifications are not configured on this server.");
}

const vapidKey = defineRoute({
  method: "get",
  path: "/push/vapid-public-key",
  summary: "The VAPID public key (applicationServerKey) to subscribe with",
  tags: ["Push"],
  auth: "public",
  responses: {
    200: { description: "The key, base64url", schema: z.object({ public_key: z.string() }) },
    503: { description: "Push is not configured (`push_unavailable`)" },
  },
  handler: (ctx) => {
    requirePush(ctx.deps.config);
    ctx.set("Cache-Control", "public, max-age=3600");
    ctx.body = { public_key: ctx.deps.config.push.vapidPublicKey };
  },
});

const subscribe = defineRoute({
  method: "post",
  path: "/push/subscribe",
  summary: "Register this browser's PushSubscription for the caller",
  tags: ["Push"],
  auth: "bearer",
  body: subscribeBody,
  responses: {
    201: { description: "Subscribed", schema: z.object({ message: z.string(), subscription: subscriptionResource }) },
    503: { description: "Push is not configured (`push_unavailable`)" },
  },
  handler: async (ctx, { body }) => {
    const { config, pool } = ctx.deps;
    requirePush(config);
    if (new URL(body.endpoint).protocol !== "https:" && !config.allowPrivateNetworkTargets) throw invalidField("endpoint", "The endpoint must be an https URL.");
    const expiresAt = body.expirationTime ? new Date(body.expirationTime) : null;
    if (expiresAt && expiresAt.getTime() <= Date.now()) throw invalidField("expirationTime", "The subscription has already expired.");
    const id = await upsertSubscription(pool, config.appKey, currentUser(ctx).id, body.endpoint, body.keys, expiresAt);
    ctx.status = 201;
    ctx.body = { message: "Subscribed to push notifications.", subscription: { id, endpoint: body.endpoint, expires_at: expiresAt?.toISOString() ?? null } };
  },
});

const unsubscribe = defineRoute({
  method: "post",
  path: "/push/unsubscribe",
  summary: "Remove one of the caller's push subscriptions by endpoint",
  tags: ["Push"],
  auth: "bearer",
  body: unsubscribeBody,
  responses: { 200: { description: "Unsubscribed", schema: z.object({ message: z.string() }) }, 404: { description: "The caller has no subscription with this endpoint" } },
  handler: async (ctx, { body }) => {
    if (!(await deleteSubscription(ctx.deps.pool, currentUser(ctx).id, body.endpoint))) throw notFound("Subscription");
    ctx.body = { message: "Unsubscribed from push notifications." };
  },
});

export const pushRoutes = [vapidKey, subscribe, unsubscribe];
