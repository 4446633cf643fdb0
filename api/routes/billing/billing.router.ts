/**
 * Billing (spec route group; DESIGN §11): the caller's plan and subscriptions
 * (`GET|POST /billing/subscription`), invoices of succeeded payments and credit notes of their
 * refunds with a PDF each, and the card processor's saved payment method through a SetupIntent.
 */
import { z } from "zod";
import { findBillingDocument, listBillingDocuments, type BillingDocumentRow } from "../../../shared/billing/documents.ts";
import { invoiceLine } from "../../../shared/billing/invoices.ts";
import { renderInvoicePdf } from "../../../shared/billing/invoicePdf.ts";
import { findCreditAccount } from "../../../shared/credits/store.ts";
import { ignoredRow, sql } from "../../../shared/db/pool.ts";
import { notFound } from "../../../shared/errors.ts";
import { currentPatronPeriod } from "../../../shared/patrons/membership.ts";
import { createSetupIntent } from "../../../shared/payments/stripe.ts";
import { listOwnedSubscriptions, listPlans } from "../../../shared/subscriptions/store.ts";
import { currentUser } from "../../context.ts";
import { paginated, paginatedSchema, paginationQuery } from "../../pagination.ts";
import { planResource, presentPlan, presentSubscription, subscriptionResource } from "../../presenters/subscription.ts";
import { idParams } from "../jobs/jobs.schema.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import { subscriptionRoutes } from "../projects/subscriptions.router.ts";

const tags = ["Billing"];

const invoiceResource = z.object({
  id: z.number(),
  kind: z.enum(["invoice", "credit_note"]).describe("A credit note records a refund (whole or partial) of the invoice it names; its amounts are what it credits."),
  original_invoice: z.object({ id: z.number(), number: z.string() }).nullable().describe("The invoice a credit note corrects; null for an invoice."),
  number: z.string(),
  issued_at: z.string(),
  transaction_id: z.number(),
  buyer: z.object({ name: z.string(), email: z.string(), company: z.string().nullable(), address: z.string().nullable(), country: z.string().nullable(), vat_id: z.string().nullable() }),
  lines: z.array(invoiceLine),
  currency: z.string(),
  net_cents: z.number(),
  vat_rate: z.number(),
  vat_cents: z.number(),
  total_cents: z.number(),
  pdf_url: z.string(),
});
const presentInvoice = (row: BillingDocumentRow): z.infer<typeof invoiceResource> => ({
  id: row.id,
  kind: row.kind,
  original_invoice: row.invoice_id === null ? null : { id: row.invoice_id, number: row.invoice_number! },
  number: row.number,
  issued_at: row.issued_at.toISOString(),
  transaction_id: row.transaction_id,
  buyer: row.buyer,
  lines: row.lines,
  currency: row.currency,
  net_cents: row.net_cents,
  vat_rate: row.vat_rate,
  vat_cents: row.vat_cents,
  total_cents: row.total_cents,
  pdf_url: `/api/billing/invoices/${row.id}/pdf`,
});

const show = defineRoute({
  method: "get",
  path: "/billing/subscription",
  summary: "The caller's plan, subscriptions, patron level and credit balance",
  description: "`plan` is the best plan among the live subscriptions of the caller's projects (the default plan when there is none).",
  tags,
  auth: "bearer",
  responses: {
    200: {
      description: "Billing state",
      schema: z.object({
        plan: planResource,
        subscriptions: z.array(subscriptionResource),
        patron_level: z.number().nullable(),
        credits: z.number(),
        has_payment_method: z.boolean().describe("A card was saved: the card processor reported a SetupIntent of POST /billing/payment-method confirmed."),
      }),
    },
  },
  handler: async (ctx) => {
    const user = currentUser(ctx);
    const { pool } = ctx.deps;
    const [plans, subs, patron, account, cardSaved] = await Promise.all([
      listPlans(pool),
      listOwnedSubscriptions(pool, user.id),
      currentPatronPeriod(pool, user.id),
      findCreditAccount(pool, user.id),
      pool.oneFirst(sql.type(z.object({ saved: z.boolean() }))`select payment_method_saved_at is not null as saved from users where id = ${user.id}`),
    ]);
    const live = subs.filter((s) => s.is_latest && s.effective_expires_at.getTime() > Date.now());
    const rank = (planId: number) => plans.find((p) => p.id === planId)?.price_cents ?? -1;
    const best = live.map((s) => s.plan_id).sort((a, b) => rank(b) - rank(a))[0];
    const plan = plans.find((p) => p.id === best) ?? plans.find((p) => p.is_default) ?? plans[0]!;
    ctx.body = { plan: presentPlan(plan), subscriptions: live.map(presentSubscription), patron_level: patron?.level ?? null, credits: account.balance, has_payment_method: cardSaved };
  },
});

// POST /billing/subscription changes a project's plan: the same operation as POST /subscriptions.
const subscribe = subscriptionRoutes.find((r) => r.method === "post" && r.path === "/subscriptions")!;
const update: RouteSpec = { ...subscribe, path: "/billing/subscription", summary: "Change a project's plan (as POST /subscriptions)", tags };

const invoices = defineRoute({
  method: "get",
  path: "/billing/invoices",
  summary: "The caller's invoices and credit notes, newest first",
  description: "Every succeeded payment has an invoice (`kind` `invoice`); every refund of one, whole or partial, a credit note (`kind` `credit_note`, numbered `CN-<year>-<n>`) naming the invoice it corrects.",
  tags,
  auth: "bearer",
  query: paginationQuery,
  responses: { 200: { description: "A page of invoices", schema: paginatedSchema(invoiceResource) } },
  handler: async (ctx, { query }) => {
    const page = await listBillingDocuments(ctx.deps.pool, currentUser(ctx).id, { limit: query.per_page, offset: (query.page - 1) * query.per_page });
    ctx.body = paginated(page.rows.map(presentInvoice), page.total, query, new URL(ctx.href));
  },
});

const invoice = defineRoute({
  method: "get",
  path: "/billing/invoices/{id}",
  summary: "One invoice or credit note",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { 200: { description: "The invoice", schema: z.object({ invoice: invoiceResource }) }, 404: { description: "Not the caller's invoice" } },
  handler: async (ctx, { params }) => {
    const row = await findBillingDocument(ctx.deps.pool, params.id);
    if (!row || row.user_id !== currentUser(ctx).id) throw notFound("Invoice");
    ctx.body = { invoice: presentInvoice(row) };
  },
});

const pdf = defineRoute({
  method: "get",
  path: "/billing/invoices/{id}/pdf",
  summary: "One invoice or credit note as a PDF",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { 200: { description: "The PDF", contentType: "application/pdf" }, 404: { description: "Not the caller's invoice" } },
  handler: async (ctx, { params }) => {
    const row = await findBillingDocument(ctx.deps.pool, params.id);
    if (!row || row.user_id !== currentUser(ctx).id) throw notFound("Invoice");
    ctx.type = "application/pdf";
    ctx.set("content-disposition", `attachment; filename="${row.number}.pdf"`);
    ctx.body = await renderInvoicePdf(row, { name: "SchemaForge" });
  },
});

const paymentMethod = defineRoute({
  method: "post",
  path: "/billing/payment-method",
  summary: "Save a card for later payments",
  description:
    "Answers a card processor SetupIntent: confirm `client_secret` with Stripe.js to save the card on the caller's customer; `has_payment_method` turns true when the card processor's `setup_intent.succeeded` webhook arrives. 503 when the card processor is not configured.",
  tags,
  auth: "bearer",
  responses: {
    200: { description: "SetupIntent created", schema: z.object({ message: z.string(), setup_intent_id: z.string(), client_secret: z.string() }) },
    502: { description: "The card processor refused" },
    503: { description: "The card processor is not configured" },
  },
  handler: async (ctx) => {
    const user = currentUser(ctx);
    const { pool, config } = ctx.deps;
    const known = await pool.oneFirst(sql.type(z.object({ id: z.string().nullable() }))`select stripe_customer_id as id from users where id = ${user.id}`);
    const setup = await createSetupIntent(config, { id: user.id, email: user.email, customerId: known });
    if (!known) await pool.query(sql.type(ignoredRow)`update users set stripe_customer_id = ${setup.customerId} where id = ${user.id} and stripe_customer_id is null`);
    ctx.body = { message: "Confirm the card with the client secret.", setup_intent_id: setup.setupIntentId, client_secret: setup.clientSecret };
  },
});

export const billingRoutes = [show, update, invoices, invoice, pdf, paymentMethod];
