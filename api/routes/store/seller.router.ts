/**
 * Sellers' analytics and payouts, and the administrators' side of payouts (mark paid, the
 * SEPA transfer file).
 */
import { z } from "zod";
import { AppError, conflict, forbidden, invalid, notFound } from "../../../shared/errors.ts";
import { enqueue } from "../../../shared/jobs/enqueue.ts";
import { payoutsProcess } from "../../../shared/jobs/kinds.ts";
import { sellerAnalytics } from "../../../shared/store/analytics.ts";
import { availableCents, insertPayout, listPayouts, lockPayout, lockSeller, markPaid, payoutStatuses, type PayoutRow } from "../../../shared/store/payouts.ts";
import { requireSeller } from "../../../shared/store/sellers.ts";
import { currentUser } from "../../context.ts";
import { isSiteAdmin } from "../../policies/roles.ts";
import { euros } from "../../presenters/storeTemplate.ts";
import { defineRoute } from "../route.ts";
import { storeIdParams, storePage, storePageQuery, storePageSchema } from "./store.schema.ts";

const tags = ["Template store"];

const payoutResource = z.object({
  id: z.number(),
  amount: z.number(),
  transferred_amount: z.number().nullable(),
  status: z.enum(payoutStatuses),
  failure: z.string().nullable(),
  has_transfer_file: z.boolean(),
  processed_at: z.string().nullable(),
  paid_at: z.string().nullable(),
  created_at: z.string(),
});

const presentPayout = (row: PayoutRow) => ({
  id: row.id,
  amount: euros(row.amount_cents),
  transferred_amount: row.transferred_cents === null ? null : euros(row.transferred_cents),
  status: row.status,
  failure: row.failure,
  has_transfer_file: row.sepa_storage_key !== null,
  processed_at: row.processed_at?.toISOString() ?? null,
  paid_at: row.paid_at?.toISOString() ?? null,
  created_at: row.created_at.toISOString(),
});

const money = z.object({ credits: z.number(), euros: z.number() });

const analytics = defineRoute({
  method: "get",
  path: "/seller/analytics",
  summary: "Your sales and payouts as a seller",
  description:
    "The spec's metrics (euros as numbers; pending_payout and completed_payouts in euros), sales per day over the last 30 days and the ten best-selling templates. Refunded sales do not count.",
  tags,
  auth: "bearer",
  responses: {
    200: {
      description: "Metrics",
      schema: z.object({
        data: z.object({
          total_sales: z.number(),
          total_revenue_credits: z.number(),
          total_revenue_euros: z.number(),
          pending_payout: z.number(),
          completed_payouts: z.number(),
          available_for_payout: z.number(),
          sales_per_day: z.array(z.object({ date: z.string(), sales: z.number(), revenue_credits: z.number(), revenue_euros: z.number() })),
          top_templates: z.array(z.object({ id: z.number(), name: z.string(), sales: z.number(), revenue: money })),
        }),
      }),
    },
  },
  handler: async (ctx) => {
    const user = currentUser(ctx);
    const { totals, perDay, top } = await sellerAnalytics(ctx.deps.pool, user.id);
    ctx.body = {
      data: {
        total_sales: totals.total_sales,
        total_revenue_credits: totals.revenue_credits,
        total_revenue_euros: euros(totals.revenue_cents),
        pending_payout: euros(totals.pending_cents),
        completed_payouts: euros(totals.completed_cents),
        available_for_payout: euros(await availableCents(ctx.deps.pool, user.id)),
        sales_per_day: perDay.map((d) => ({ date: d.date, sales: d.sales, revenue_credits: d.revenue_credits, revenue_euros: euros(d.revenue_cents) })),
        top_templates: top.map((t) => ({ id: t.id, name: t.name, sales: t.sales, revenue: { credits: t.revenue_credits, euros: euros(t.revenue_cents) } })),
      },
    };
  },
});

const requestPayout = defineRoute({
  method: "post",
  path: "/seller/payouts",
  summary: "Ask for a payout of your pending earnings",
  description:
    "`{amount}` in euros: at least the payout minimum (the administrators' `payout_minimum_eur` setting, else PAYOUT_MINIMUM_EUR) and at most your pending earnings less payouts not yet processed (422 otherwise); needs a complete seller profile. The payouts__process job then moves earnings older than PAYOUT_HOLD_DAYS (oldest first, up to the amount) to the payout and writes a SEPA credit transfer file for the operator.",
  tags,
  auth: "bearer",
  body: z.object({ amount: z.number().positive().max(10_000_000).multipleOf(0.01, { error: "The amount must be given in whole cents." }) }),
  responses: { 201: { description: "Requested", schema: z.object({ message: z.string(), payout: payoutResource }) } },
  handler: async (ctx, { body }) => {
    const user = currentUser(ctx);
    const { config } = ctx.deps;
    const cents = Math.round(body.amount * 100);
    // Administrators may set the minimum at run time (PUT /admin/settings); null keeps PAYOUT_MINIMUM_EUR.
    const minimumCents = (await ctx.deps.settings.get()).payout_minimum_cents ?? config.store.payoutMinimumCents;
    const payout = await ctx.deps.pool.transaction(async (tx) => {
      await requireSeller(tx, config.appKey, user.id);
      await lockSeller(tx, user.id);
      if (cents < minimumCents) throw invalid({ amount: [`The minimum payout is ${euros(minimumCents)} EUR.`] });
      const available = await availableCents(tx, user.id);
      if (cents > available) throw invalid({ amount: [`At most ${euros(available)} EUR can be paid out now.`] });
      const row = await insertPayout(tx, user.id, cents);
      await enqueue(tx, payoutsProcess, { payout_id: row.id }, { userId: user.id });
      return row;
    });
    ctx.status = 201;
    ctx.body = { message: "Payout requested.", payout: presentPayout(payout) };
  },
});

const list = defineRoute({
  method: "get",
  path: "/seller/payouts",
  summary: "Your payouts, newest first",
  tags,
  auth: "bearer",
  query: storePageQuery,
  responses: { 200: { description: "One page", schema: storePageSchema(payoutResource) } },
  handler: async (ctx, { query }) => {
    const { rows, total } = await listPayouts(ctx.deps.pool, currentUser(ctx).id, query);
    ctx.body = storePage(rows.map(presentPayout), total, query);
  },
});

const markPaidRoute = defineRoute({
  method: "post",
  path: "/admin/payouts/{id}/mark-paid",
  summary: "Mark a processed payout paid (administrators)",
  tags,
  auth: "bearer",
  params: storeIdParams,
  responses: { 200: { description: "Paid", schema: z.object({ message: z.string(), payout: payoutResource }) }, 409: { description: "Not processed yet, failed or paid before" } },
  handler: async (ctx, { params }) => {
    if (!isSiteAdmin(currentUser(ctx))) throw forbidden();
    const payout = await ctx.deps.pool.transaction(async (tx) => {
      const row = await lockPayout(tx, params.id);
      if (!row) throw notFound("Payout");
      if (!(await markPaid(tx, row.id))) throw conflict(`A ${row.status} payout cannot be marked paid.`);
      return (await lockPayout(tx, row.id))!;
    });
    ctx.body = { message: "Payout marked paid.", payout: presentPayout(payout) };
  },
});

const transferFile = defineRoute({
  method: "get",
  path: "/admin/payouts/{id}/transfer-file",
  summary: "The SEPA credit transfer file (pain.001) of a payout (administrators)",
  tags,
  auth: "bearer",
  params: storeIdParams,
  responses: { 200: { description: "pain.001.001.03 XML", contentType: "application/xml" } },
  handler: async (ctx, { params }) => {
    if (!isSiteAdmin(currentUser(ctx))) throw forbidden();
    const row = await lockPayoutRead(ctx, params.id);
    const file = row.sepa_storage_key ? await ctx.deps.storage.readBuffer(row.sepa_storage_key) : null;
    if (!file) throw new AppError(404, "not_found", "This payout has no transfer file.");
    ctx.type = "application/xml";
    ctx.set("Content-Disposition", `attachment; filename="payout-${row.id}-pain.001.xml"`);
    ctx.body = file;
  },
});

/** @throws 404 */
async function lockPayoutRead(ctx: Parameters<typeof transferFile.handler>[0], id: number): Promise<PayoutRow> {
  const row = await ctx.deps.pool.transaction((tx) => lockPayout(tx, id));
  if (!row) throw notFound("Payout");
  return row;
}

export const storeSellerRoutes = [analytics, requestPayout, list, markPaidRoute, transferFile];
