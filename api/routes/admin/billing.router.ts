/**
 * Administration of money and credits: `GET /admin/billing-report` (JSON or `?format=csv`)
 * and `POST /admin/users/{id}/credits` `{amount, reason}`, a signed manual adjustment written
 * to the ledger (a deduction the balance does not cover answers 402).
 */
import { randomUUID } from "node:crypto";
import { stringify } from "csv-stringify/sync";
import { z } from "zod";
import { billingReport, reportRow } from "../../../shared/billing/report.ts";
import { grantCredits, spendCredits } from "../../../shared/credits/ledger.ts";
import { findUserById } from "../../../shared/db/users.ts";
import { invalidField, notFound } from "../../../shared/errors.ts";
import { currentUser, type AppContext } from "../../context.ts";
import { authorize } from "../../policies/authorize.ts";
import { isSiteAdmin } from "../../policies/roles.ts";
import { idParams } from "../jobs/jobs.schema.ts";
import { defineRoute } from "../route.ts";

const adminOnly = (ctx: AppContext) => authorize(isSiteAdmin(currentUser(ctx)), "Only administrators may do this.");
const denied = { 403: { description: "Not an administrator" } };
const realDay = (v: string) => {
  const parsed = new Date(`${v}T00:00:00Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === v && v >= "1970-01-01" && v <= "9999-12-31";
};
const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/).refine(realDay, "expected a date YYYY-MM-DD");

const report = defineRoute({
  method: "get",
  path: "/admin/billing-report",
  summary: "Revenue per day or month by payment method, credits sold and spent, refunds",
  description: "`group` day (default) or month; `from` (default 30 days ago) inclusive, `to` (default tomorrow) exclusive; `format=csv` downloads the same rows.",
  tags: ["Admin"],
  auth: "bearer",
  query: z.object({ group: z.enum(["day", "month"]).default("day"), from: day.optional(), to: day.optional(), format: z.enum(["json", "csv"]).default("json") }),
  responses: { 200: { description: "The report", schema: z.object({ data: z.array(reportRow) }).or(z.string()) }, ...denied },
  handler: async (ctx, { query }) => {
    adminOnly(ctx);
    const today = new Date();
    const from = query.from ?? new Date(today.getTime() - 30 * 86_400_000).toISOString().slice(0, 10);
    const to = query.to ?? new Date(today.getTime() + 86_400_000).toISOString().slice(0, 10);
    if (from >= to) throw invalidField("to", "The end must come after the start.");
    const rows = await billingReport(ctx.deps.pool, { group: query.group, from, to });
    if (query.format === "csv") {
      ctx.type = "text/csv";
      ctx.set("content-disposition", `attachment; filename="billing-${from}-${to}.csv"`);
      ctx.body = stringify([...rows], { header: true, columns: Object.keys(reportRow.shape) });
      return;
    }
    ctx.body = { data: rows };
  },
});

const adjust = defineRoute({
  method: "post",
  path: "/admin/users/{id}/credits",
  summary: "Add or deduct a user's credits by hand",
  description: "`amount` is signed (positive adds, negative deducts); the ledger entry records the reason and the administrator. A deduction the balance does not cover answers 402 and changes nothing. Send `Idempotency-Key` to make a retried request apply once.",
  tags: ["Admin"],
  auth: "bearer",
  params: idParams,
  body: z.object({
    amount: z.number().int().min(-1_000_000_000).max(1_000_000_000).refine((v) => v !== 0, "The amount may not be zero."),
    reason: z.string().trim().min(3).max(200),
  }),
  responses: {
    200: { description: "Adjusted", schema: z.object({ message: z.string(), entry_id: z.number(), balance: z.number(), replayed: z.boolean() }) },
    ...denied,
    402: { description: "A deduction beyond the balance" },
    404: { description: "No such user" },
  },
  handler: async (ctx, { params, body }) => {
    adminOnly(ctx);
    const admin = currentUser(ctx);
    const { pool } = ctx.deps;
    if (!(await findUserById(pool, params.id))) throw notFound("User");
    const header = ctx.get("idempotency-key");
    const key = `admin:${admin.id}:${/^[\w.:-]{1,100}$/.test(header) ? header : randomUUID()}`;
    const input = { userId: params.id, amount: Math.abs(body.amount), reason: `admin_adjustment: ${body.reason}`, referenceType: "admin_user", referenceId: String(admin.id), idempotencyKey: key };
    const result = body.amount > 0 ? await grantCredits(pool, input) : await spendCredits(pool, input);
    ctx.body = { message: "Credits adjusted.", entry_id: result.entryId, balance: result.balanceAfter, replayed: result.replayed };
  },
});

export const adminBillingRoutes = [report, adjust];
