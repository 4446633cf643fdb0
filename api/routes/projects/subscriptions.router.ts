/**
 * Project subscriptions: `GET /subscriptions` (the caller's projects), `POST /subscriptions`
 * `{project_id, plan_id, payment_method}` (a new period, paid in credits or by card),
 * `POST /subscriptions/{id}/cancel` (no renewal; active until it ends),
 * `POST /subscriptions/{id}/renew` (one more period from credits; lifts the soft lock), and
 * `GET /plans`. Acting on a subscription takes the right to manage its project.
 */
import { z } from "zod";
import { conflict, invalidField, notFound } from "../../../shared/errors.ts";
import { startPayment } from "../../../shared/payments/purchase.ts";
import { cancelSubscription, refuseRunningSamePlan, renewWithCredits, subscribeWithCredits } from "../../../shared/subscriptions/subscriptions.ts";
import { findPlan, findSubscription, listOwnedSubscriptions, listPlans } from "../../../shared/subscriptions/store.ts";
import { currentUser } from "../../context.ts";
import { projectForWrite } from "../../policies/projectGuard.ts";
import { presentTransaction, transactionResource } from "../../presenters/payments.ts";
import { planResource, presentPlan, presentSubscription, subscriptionResource } from "../../presenters/subscription.ts";
import { idParams } from "../jobs/jobs.schema.ts";
import { hiddenAs } from "../kanban/load.ts";
import { defineRoute } from "../route.ts";
import { projectArchivedResponse, projectLockedResponse } from "../projectStates.ts";

export { subscriptionResource };
const tags = ["Subscriptions"];
const id = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
const one = z.object({ message: z.string(), subscription: subscriptionResource });
/** A subscription changes with the project's expiry (renewing lifts it) but not while it is locked or archived. */
const refusals = {
  ...projectLockedResponse,
  ...projectArchivedResponse,
  402: { description: "Not enough credits (`insufficient_credits`)" },
  403: { description: "The caller may not manage the project" },
  404: { description: "No such project, plan or subscription" },
};

const list = defineRoute({
  method: "get",
  path: "/subscriptions",
  summary: "Subscriptions of the caller's projects",
  tags,
  auth: "bearer",
  responses: { 200: { description: "Subscriptions, newest first", schema: z.object({ data: z.array(subscriptionResource) }) } },
  handler: async (ctx) => {
    ctx.body = { data: (await listOwnedSubscriptions(ctx.deps.pool, currentUser(ctx).id)).map(presentSubscription) };
  },
});

const plans = defineRoute({
  method: "get",
  path: "/plans",
  summary: "Subscription plans",
  tags,
  auth: "public",
  responses: { 200: { description: "Plans, cheapest first", schema: z.object({ data: z.array(planResource) }) } },
  handler: async (ctx) => {
    ctx.body = { data: (await listPlans(ctx.deps.pool)).map(presentPlan) };
  },
});

const create = defineRoute({
  method: "post",
  path: "/subscriptions",
  summary: "Subscribe a project to a plan",
  description:
    "`payment_method: credits` (the default) charges the plan's `price_credits` to the caller at once and answers 201 with the subscription. `cardprocessor`/`walletprovider` answers 202 with a pending transaction; the period starts when the payment's webhook arrives. A new period starts now and replaces the project's latest one, so while that one is of the same plan and still running the answer is 409 `subscription_active`: renew it instead.",
  tags,
  auth: "bearer",
  body: z.object({ project_id: id, plan_id: id, payment_method: z.enum(["credits", "cardprocessor", "walletprovider"]).default("credits") }),
  responses: {
    201: { description: "Subscribed", schema: one },
    202: { description: "Payment started", schema: z.object({ message: z.string(), transaction: transactionResource }) },
    ...refusals,
    409: { description: "The project's latest subscription is of this plan and still running (`subscription_active`: renew it instead); or the project is archived (`project_archived`)" },
    502: { description: "The payment provider refused" },
    503: { description: "The payment method is not configured" },
  },
  handler: async (ctx, { body }) => {
    const user = currentUser(ctx);
    const { pool, config } = ctx.deps;
    const plan = await findPlan(pool, body.plan_id);
    if (!plan) throw invalidField("plan_id", "The selected plan id is invalid.");
    if (body.payment_method !== "credits") {
      await pool.transaction(async (tx) => {
        await projectForWrite(tx, body.project_id, user, "manage", { allowExpired: true });
        await refuseRunningSamePlan(tx, body.project_id, plan);
      });
      if (plan.price_cents <= 0) throw invalidField("payment_method", "This plan is not sold for money; choose credits.");
      const started = await startPayment(pool, config, user, body.payment_method, {
        kind: "subscription",
        packageId: null,
        itemId: plan.id,
        projectId: body.project_id,
        credits: 0,
        amountCents: plan.price_cents,
        currency: "EUR",
        description: `${plan.name} subscription`,
      });
      ctx.status = 202;
      ctx.body = { message: "Payment started.", transaction: presentTransaction(started.transaction, { client_secret: started.clientSecret, approval_url: started.approvalUrl }) };
      return;
    }
    const subId = await pool.transaction(async (tx) => {
      await projectForWrite(tx, body.project_id, user, "manage", { allowExpired: true });
      await refuseRunningSamePlan(tx, body.project_id, plan);
      return subscribeWithCredits(tx, user.id, body.project_id, plan);
    });
    ctx.status = 201;
    ctx.body = { message: "Subscribed.", subscription: presentSubscription((await findSubscription(pool, subId))!) };
  },
});

const cancel = defineRoute({
  method: "post",
  path: "/subscriptions/{id}/cancel",
  summary: "Stop a subscription's renewal",
  description: "The subscription stays active until `expires_at` and is then not renewed.",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { 200: { description: "Cancelled", schema: one }, ...refusals },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    await ctx.deps.pool.transaction(async (tx) => {
      const sub = await findSubscription(tx, params.id, true);
      if (!sub) throw notFound("Subscription");
      // A stranger gets the answer of a missing id, not "Project not found.", which would tell them this id exists.
      await hiddenAs("Subscription", () => projectForWrite(tx, sub.project_id, user, "manage", { allowExpired: true }));
      await cancelSubscription(tx, sub.id);
    });
    ctx.body = { message: "Subscription cancelled; it stays active until it expires.", subscription: presentSubscription((await findSubscription(ctx.deps.pool, params.id))!) };
  },
});

const renew = defineRoute({
  method: "post",
  path: "/subscriptions/{id}/renew",
  summary: "Renew a subscription for one more period, paid in credits",
  description: "Extends the project's latest subscription by its plan's duration (from now when it had run out), charges its `price_credits` to the caller and lifts the soft lock of an expired project.",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { 200: { description: "Renewed", schema: one }, ...refusals, 409: { description: "Not the project's latest subscription (`subscription_superseded`); or the project is archived (`project_archived`)" } },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    await ctx.deps.pool.transaction(async (tx) => {
      const sub = await findSubscription(tx, params.id, true);
      if (!sub) throw notFound("Subscription");
      // A stranger gets the answer of a missing id, not "Project not found.", which would tell them this id exists.
      await hiddenAs("Subscription", () => projectForWrite(tx, sub.project_id, user, "manage", { allowExpired: true }));
      if (!sub.is_latest) throw conflict("A newer subscription of this project exists; renew that one.", "subscription_superseded");
      await renewWithCredits(tx, sub, user.id, new Date());
    });
    ctx.body = { message: "Subscription renewed.", subscription: presentSubscription((await findSubscription(ctx.deps.pool, params.id))!) };
  },
});

export const subscriptionRoutes = [list, plans, create, cancel, renew];
