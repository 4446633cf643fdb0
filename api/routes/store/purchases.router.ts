/**
 * Buying store templates and receiving them: purchase, the caller's purchases, download of
 * the bought version as a zip, install into a project, and an administrator's refund.
 */
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { createZipStream } from "../../../shared/archive/zipWriter.ts";
import { forbidden, notFound } from "../../../shared/errors.ts";
import { deliverableVersion, installVersion, versionZipEntries } from "../../../shared/store/delivery.ts";
import { assertPortableVersion } from "../../../shared/store/portability.ts";
import { listPurchases, purchase, refundPurchase, type PurchaseListRow } from "../../../shared/store/purchases.ts";
import { requestEuroRefund, startEuroPurchase } from "../../../shared/store/euroPurchases.ts";
import { currentUser } from "../../context.ts";
import { presentTransaction, transactionResource } from "../../presenters/payments.ts";
import { projectForWrite } from "../../policies/projectGuard.ts";
import { isSiteAdmin } from "../../policies/roles.ts";
import { euros } from "../../presenters/storeTemplate.ts";
import { templateResource } from "../../presenters/template.ts";
import { downloadName } from "../projects/bundle.router.ts";
import { projectStateResponses } from "../projectStates.ts";
import { defineRoute } from "../route.ts";
import { reloadTemplate } from "../templates/update.ts";
import { storeIdParams, storePage, storePageQuery, storePageSchema } from "./store.schema.ts";

const tags = ["Template store"];
const id = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);

const purchaseResource = z.object({
  id: z.number(),
  template: z.object({ id: z.number(), name: z.string(), version: z.number() }),
  seller: z.object({ id: z.number(), username: z.string(), name: z.string() }).nullable(),
  payment_type: z.enum(["credits", "euros", "free"]),
  price_credits: z.number(),
  price_euros: z.number(),
  status: z.enum(["completed", "refunded"]),
  created_at: z.string(),
});

const presentPurchase = (row: PurchaseListRow) => ({
  id: row.id,
  template: { id: row.store_template_id, name: row.template_name, version: row.version },
  // A seller who closed their account leaves the purchase without one.
  seller: row.seller_id === null ? null : { id: row.seller_id, username: row.seller_username!, name: row.seller_name! },
  payment_type: row.payment_type,
  price_credits: row.price_credits,
  price_euros: euros(row.price_euro_cents),
  status: row.status,
  created_at: row.created_at.toISOString(),
});

const buy = defineRoute({
  method: "post",
  path: "/store/purchase",
  summary: "Buy a store template",
  description: [
    "`{template_id}` (DESIGN §14; `payment_method` is for euro prices). The template must be published, not your own (403) and",
    "not bought before (409 `already_purchased`; a concurrent second purchase charges nothing), and its file names must be portable output",
    "paths (409 `non_portable_path` naming the path, for versions published before a rule existed; nothing is charged). Free templates are recorded at",
    "price 0, credit prices are spent from your balance (402 `insufficient_credits` when it is short): 201 with the purchase.",
    "Euro prices need `payment_method` (`cardprocessor` or `walletprovider`): 202 with the started payment (`client_secret` for",
    "Stripe.js or `approval_url`), and the provider's webhook records the purchase once (409 `payment_pending` while one is open;",
    "503 when the provider is not configured). You receive the version current when the purchase started.",
  ].join(" "),
  tags,
  auth: "bearer",
  body: z.object({ template_id: id, payment_method: z.enum(["cardprocessor", "walletprovider"]).optional() }),
  responses: {
    201: { description: "Bought", schema: z.object({ message: z.string(), purchase: purchaseResource }) },
    202: { description: "Euro payment started; the webhook completes the purchase", schema: z.object({ message: z.string(), transaction: transactionResource }) },
    402: { description: "Insufficient credits" },
    502: { description: "The payment provider refused or could not be reached" },
    503: { description: "The payment provider is not configured" },
    404: { description: "No such published template" },
    409: { description: "Already bought, a payment still pending, or a file name that is not a portable output path (`non_portable_path`)" },
  },
  handler: async (ctx, { body }) => {
    const user = currentUser(ctx);
    const { config, pool } = ctx.deps;
    if (body.payment_method) {
      const started = await startEuroPurchase(pool, config, user, body.template_id, body.payment_method);
      ctx.status = 202;
      ctx.body = {
        message: "Payment started; the purchase completes when the payment does.",
        transaction: presentTransaction(started.transaction, { client_secret: started.clientSecret, approval_url: started.approvalUrl }),
      };
      return;
    }
    const row = await pool.transaction((tx) =>
      purchase(tx, { buyerId: user.id, storeTemplateId: body.template_id }, { sharePercent: config.store.sellerSharePercent, creditValueCents: config.store.creditValueCents }),
    );
    const listed = (await listPurchases(pool, user.id, { page: 1, rows: 100 })).rows.find((p) => p.id === row.id)!;
    ctx.status = 201;
    ctx.body = { message: "Template purchased.", purchase: presentPurchase(listed) };
  },
});

const list = defineRoute({
  method: "get",
  path: "/store/purchases",
  summary: "Your purchases, newest first",
  tags,
  auth: "bearer",
  query: storePageQuery,
  responses: { 200: { description: "One page", schema: storePageSchema(purchaseResource) } },
  handler: async (ctx, { query }) => {
    const { rows, total } = await listPurchases(ctx.deps.pool, currentUser(ctx).id, query);
    ctx.body = storePage(rows.map(presentPurchase), total, query);
  },
});

const download = defineRoute({
  method: "get",
  path: "/store/templates/{id}/download",
  summary: "Download the bought version of a store template as a zip",
  description:
    "Buyers get the version they bought (also after the template was withdrawn), sellers the latest version of their own template; others 403. One folder per packaged template, each in the layout POST …/templates/import reads (template.json and files/).",
  tags,
  auth: "bearer",
  params: storeIdParams,
  responses: { 200: { description: "The zip", contentType: "application/zip" } },
  handler: async (ctx, { params }) => {
    const { name, version } = await deliverableVersion(ctx.deps.pool, params.id, currentUser(ctx).id);
    ctx.set("Content-Disposition", `attachment; filename="${downloadName(`${name}-v${version.version}`, "zip")}"`);
    ctx.set("Cache-Control", "private, no-store");
    ctx.type = "application/zip";
    ctx.body = createZipStream(versionZipEntries(version), { mtime: version.created_at });
  },
});

const install = defineRoute({
  method: "post",
  path: "/store/templates/{id}/install",
  summary: "Install the bought version of a store template into a project",
  description:
    "`{project_id}`: a project whose content you may change (refused while it is locked, expired or archived). Copies the version's templates with their files and variables; buyers and the seller only (403 for others). A version whose file names are not portable output paths (published before a rule existed) is refused with 409 `non_portable_path` naming the path, nothing installed.",
  tags,
  auth: "bearer",
  params: storeIdParams,
  body: z.object({ project_id: id }),
  responses: {
    ...projectStateResponses,
    409: { description: "The project is archived (`project_archived`), or a file name of the version is not a portable output path (`non_portable_path`)" },
    201: { description: "Installed", schema: z.object({ message: z.string(), templates: z.array(templateResource) }) },
  },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const ids = await ctx.deps.pool.transaction(async (tx) => {
      const { version } = await deliverableVersion(tx, params.id, user.id);
      const project = await projectForWrite(tx, body.project_id, user, "content");
      assertPortableVersion(version.content, "installed");
      return installVersion(tx, version, project.id, user.id);
    });
    const templates = [];
    for (const templateId of ids) templates.push(await reloadTemplate(ctx.deps.pool, templateId));
    ctx.status = 201;
    ctx.body = { message: "Template installed.", templates };
  },
});

const refund = defineRoute({
  method: "post",
  path: "/admin/store/purchases/{id}/refund",
  summary: "Refund a store purchase (administrators)",
  description: [
    "The sale stops counting and the buyer loses access; the seller's earning is reversed while it is still pending. Credits go back",
    "to the buyer at once (200). A euro purchase is refunded at the payment provider: 202, the payments__refund job asks the card",
    "processor or wallet provider to refund what is left of the payment and, once it has, refunds the purchase and issues the",
    "credit note, so the buyer never loses access without getting the money back; asking again answers 202 and refunds once.",
    "409 `refund_at_provider` only where this service cannot refund the payment (its provider is not configured, or the payment",
    "has no provider id): refund it at the provider, whose refund webhook then refunds the purchase.",
  ].join(" "),
  tags,
  auth: "bearer",
  params: storeIdParams,
  responses: {
    200: { description: "Refunded", schema: z.object({ message: z.string(), refunded: z.boolean() }) },
    202: { description: "A euro purchase: its refund is requested at the payment provider", schema: z.object({ message: z.string(), refunded: z.literal(false), refund_requested: z.literal(true) }) },
    409: { description: "A euro purchase this service cannot refund: refund the payment at the provider (`refund_at_provider`)" },
  },
  handler: async (ctx, { params }) => {
    const admin = currentUser(ctx);
    if (!isSiteAdmin(admin)) throw forbidden();
    const { pool, config } = ctx.deps;
    const outcome = await pool.transaction(async (tx) => {
      const paidBy = await tx.maybeOneFirst(sql.type(z.object({ payment_type: z.string() }))`select payment_type from store_purchases where id = ${params.id}`);
      if (paidBy === null) throw notFound("Purchase");
      // Euros go back through the provider first: taking access here would keep the buyer's money.
      if (paidBy === "euros") return requestEuroRefund(tx, config, params.id, admin.id);
      return (await refundPurchase(tx, params.id)) ? "refunded" : "refunded_before";
    });
    if (outcome === "requested" || outcome === "requested_before") {
      ctx.status = 202;
      ctx.body = { message: "The refund is requested at the payment provider; the purchase is refunded when the provider confirms it.", refunded: false, refund_requested: true };
      return;
    }
    ctx.body = { message: outcome === "refunded" ? "Purchase refunded." : "The purchase was refunded before.", refunded: outcome === "refunded" };
  },
});

export const storePurchaseRoutes = [buy, list, download, install, refund];
