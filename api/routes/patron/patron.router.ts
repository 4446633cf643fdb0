/**
 * Patron membership (DESIGN §11): `GET /patron/levels` (levels and the caller's status),
 * `POST /patron/subscribe` `{level, payment_method}` (a monthly period, paid in credits or by
 * card/wallet), `POST /patron/cancel` (no renewal; the paid period stays valid).
 */
import { z } from "zod";
import { invalidField } from "../../../shared/errors.ts";
import { currentPatronPeriod } from "../../../shared/patrons/membership.ts";
import { buyPatronWithCredits, cancelPatron, findPatronLevel, listPatronLevels, patronRenewalCancelled } from "../../../shared/patrons/renewal.ts";
import { startPayment } from "../../../shared/payments/purchase.ts";
import type { CommonQueryMethods } from "../../../shared/db/pool.ts";
import { currentUser } from "../../context.ts";
import { presentTransaction, transactionResource } from "../../presenters/payments.ts";
import { defineRoute } from "../route.ts";

const tags = ["Patron"];
const levelResource = z.object({ level: z.number(), name: z.string(), price_credits: z.number(), price_cents: z.number(), monthly_credits: z.number(), duration_days: z.number() });
const statusResource = z.object({
  is_patron: z.boolean(),
  patron_level: z.number().nullable(),
  expires_at: z.string().nullable(),
  cancelled: z.boolean(),
});

async function patronStatus(conn: CommonQueryMethods, userId: number): Promise<z.infer<typeof statusResource>> {
  const period = await currentPatronPeriod(conn, userId);
  // Cancelled says whether membership stops: a later period bought after a cancellation continues it.
  return { is_patron: period !== null, patron_level: period?.level ?? null, expires_at: period?.expires_at.toISOString() ?? null, cancelled: period !== null && (await patronRenewalCancelled(conn, userId)) };
}

const levels = defineRoute({
  method: "get",
  path: "/patron/levels",
  summary: "Patron levels and the caller's membership",
  tags,
  auth: "bearer",
  responses: { 200: { description: "Levels and status", schema: z.object({ data: z.array(levelResource), status: statusResource }) } },
  handler: async (ctx) => {
    const { pool } = ctx.deps;
    ctx.body = { data: [...(await listPatronLevels(pool))], status: await patronStatus(pool, currentUser(ctx).id) };
  },
});

const subscribe = defineRoute({
  method: "post",
  path: "/patron/subscribe",
  summary: "Become a patron (or renew early) for one period",
  description:
    "`credits` (the default) charges the level's `price_credits` at once: 201 with the status. A new period starts when the running one ends. `cardprocessor`/`walletprovider` answers 202 with a pending transaction; the period is added when the payment's webhook arrives.",
  tags,
  auth: "bearer",
  body: z.object({ level: z.number().int().min(1).max(100), payment_method: z.enum(["credits", "cardprocessor", "walletprovider"]).default("credits") }),
  responses: {
    201: { description: "Patron", schema: z.object({ message: z.string(), status: statusResource }) },
    202: { description: "Payment started", schema: z.object({ message: z.string(), transaction: transactionResource }) },
    402: { description: "Not enough credits" },
    502: { description: "The payment provider refused" },
    503: { description: "The payment method is not configured" },
  },
  handler: async (ctx, { body }) => {
    const user = currentUser(ctx);
    const { pool, config } = ctx.deps;
    const level = await findPatronLevel(pool, body.level);
    if (!level) throw invalidField("level", "The selected level is invalid.");
    if (body.payment_method !== "credits") {
      if (level.price_cents <= 0) throw invalidField("payment_method", "This level is not sold for money; choose credits.");
      const started = await startPayment(pool, config, user, body.payment_method, {
        kind: "patron",
        packageId: null,
        itemId: level.level,
        projectId: null,
        credits: 0,
        amountCents: level.price_cents,
        currency: "EUR",
        description: `Patron membership: ${level.name}`,
      });
      ctx.status = 202;
      ctx.body = { message: "Payment started.", transaction: presentTransaction(started.transaction, { client_secret: started.clientSecret, approval_url: started.approvalUrl }) };
      return;
    }
    await pool.transaction((tx) => buyPatronWithCredits(tx, user.id, level));
    ctx.status = 201;
    ctx.body = { message: "Thank you for becoming a patron.", status: await patronStatus(pool, user.id) };
  },
});

const cancel = defineRoute({
  method: "post",
  path: "/patron/cancel",
  summary: "Stop renewing the caller's patron membership",
  tags,
  auth: "bearer",
  responses: { 200: { description: "Cancelled", schema: z.object({ message: z.string(), status: statusResource }) } },
  handler: async (ctx) => {
    const user = currentUser(ctx);
    await cancelPatron(ctx.deps.pool, user.id);
    ctx.body = { message: "Your membership will not be renewed; it stays valid until it expires.", status: await patronStatus(ctx.deps.pool, user.id) };
  },
});

export const patronRoutes = [levels, subscribe, cancel];
