/**
 * Sellers' side of store templates: create from their own templates (seller profile gate),
 * update, delete (withdraw once sold), publish (freezes a version after the plagiarism check).
 */
import { z } from "zod";
import { AppError, conflict, invalid } from "../../../shared/errors.ts";
import {
  deleteStoreTemplate,
  findStoreTemplate,
  foreignTemplates,
  insertStoreTemplate,
  listSources,
  lockStoreTemplate,
  replaceSources,
  setStatus,
  updateStoreTemplate,
} from "../../../shared/store/catalog.ts";
import { assertPortableVersion } from "../../../shared/store/portability.ts";
import { checkPlagiarism, presentCheck } from "../../../shared/store/plagiarism.ts";
import { requireSeller } from "../../../shared/store/sellers.ts";
import { insertVersion, snapshotTemplates } from "../../../shared/store/versions.ts";
import { sql } from "../../../shared/db/pool.ts";
import { currentUser, type AppContext } from "../../context.ts";
import { presentStoreTemplate } from "../../presenters/storeTemplate.ts";
import { defineRoute } from "../route.ts";
import { storeTemplateForEdit } from "./load.ts";
import { createStoreTemplateBody, plagiarismResource, storeIdParams, storeTemplateResource, updateStoreTemplateBody } from "./store.schema.ts";

const tags = ["Template store"];
const saved = z.object({ message: z.string(), store_template: storeTemplateResource });

/** @throws 422 on template_ids naming templates that are not the seller's own */
async function assertOwnTemplates(conn: Parameters<typeof foreignTemplates>[0], sellerId: number, ids: number[]) {
  const foreign = await foreignTemplates(conn, sellerId, ids);
  if (foreign.length) throw invalid({ template_ids: [`Only your own templates can be sold (not: ${foreign.join(", ")}).`] });
}

/** The presented store template after a write. */
async function present(ctx: AppContext, id: number) {
  const user = currentUser(ctx);
  return presentStoreTemplate((await findStoreTemplate(ctx.deps.pool, id, user.id))!, user.id, ctx.deps.config.appUrl);
}

const create = defineRoute({
  method: "post",
  path: "/store/templates",
  summary: "Create a store template (a draft) from your own templates",
  description:
    "Only for users with a complete seller profile (403 `seller_profile_incomplete`). `template_ids` are your own templates (of projects you own, or top-level ones); `price_euros` in euros with whole cents. Publish it with POST /store/templates/{id}/publish.",
  tags,
  auth: "bearer",
  body: createStoreTemplateBody,
  responses: { 201: { description: "Created", schema: saved } },
  handler: async (ctx, { body }) => {
    const user = currentUser(ctx);
    const id = await ctx.deps.pool.transaction(async (tx) => {
      await requireSeller(tx, ctx.deps.config.appKey, user.id);
      await assertOwnTemplates(tx, user.id, body.template_ids);
      const fields = { ...body, price_euro_cents: Math.round(body.price_euros * 100) };
      if (body.price_type !== "credits") fields.price_credits = 0;
      if (body.price_type !== "euros") fields.price_euro_cents = 0;
      return insertStoreTemplate(tx, user.id, fields, body.template_ids);
    });
    ctx.status = 201;
    ctx.body = { message: "Store template created.", store_template: await present(ctx, id) };
  },
});

const update = defineRoute({
  method: "put",
  path: "/store/templates/{id}",
  summary: "Update a store template",
  description:
    "The seller only. Buyers keep the version they bought: changed templates reach the store with the next publish, which freezes a new version. A withdrawn template cannot be changed (409).",
  tags,
  auth: "bearer",
  params: storeIdParams,
  body: updateStoreTemplateBody,
  responses: { 200: { description: "Updated", schema: saved }, 409: { description: "The template is withdrawn" } },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    await ctx.deps.pool.transaction(async (tx) => {
      // Locked first, then read: a withdraw or another update committed while this one waited is seen.
      await lockStoreTemplate(tx, params.id);
      const current = await storeTemplateForEdit(tx, params.id, user);
      if (current.status === "withdrawn") throw conflict("A withdrawn store template cannot be changed.");
      const priceType = body.price_type ?? current.price_type;
      const credits = priceType === "credits" ? (body.price_credits ?? current.price_credits) : 0;
      const cents = priceType === "euros" ? (body.price_euros !== undefined ? Math.round(body.price_euros * 100) : current.price_euro_cents) : 0;
      if (priceType === "credits" && credits <= 0) throw invalid({ price_credits: ["A credits price needs price_credits above 0."] });
      if (priceType === "euros" && cents <= 0) throw invalid({ price_euros: ["A euros price needs price_euros above 0."] });
      if (body.template_ids) {
        await assertOwnTemplates(tx, user.id, body.template_ids);
        await replaceSources(tx, params.id, body.template_ids);
      }
      const { template_ids: _ids, price_euros: _euros, ...rest } = body;
      await updateStoreTemplate(tx, params.id, { ...rest, price_type: priceType, price_credits: credits, price_euro_cents: cents });
    });
    ctx.body = { message: "Store template updated.", store_template: await present(ctx, params.id) };
  },
});

const remove = defineRoute({
  method: "delete",
  path: "/store/templates/{id}",
  summary: "Delete a store template (withdrawn instead once sold)",
  description: "The seller only. A template that was ever bought, or for which a payment was started, is withdrawn: it leaves the store, and its buyers keep downloads and installs.",
  tags,
  auth: "bearer",
  params: storeIdParams,
  responses: { 200: { description: "Deleted or withdrawn", schema: z.object({ message: z.string(), withdrawn: z.boolean() }) } },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    const withdrawn = await ctx.deps.pool.transaction(async (tx) => {
      await lockStoreTemplate(tx, params.id);
      await storeTemplateForEdit(tx, params.id, user);
      // A payment started for it counts as a sale: deleting the template would drop the
      // payment's intent, and a payment succeeding later would then buy nothing.
      const sold = await tx.exists(sql.type(z.object({ one: z.number() }))`
        select 1 as one from store_purchases where store_template_id = ${params.id}
        union all select 1 from store_payment_intents where store_template_id = ${params.id}`);
      if (sold) await setStatus(tx, params.id, "withdrawn");
      else await deleteStoreTemplate(tx, params.id);
      return sold;
    });
    ctx.body = { message: withdrawn ? "Store template withdrawn; its buyers keep access." : "Store template deleted.", withdrawn };
  },
});

const publish = defineRoute({
  method: "post",
  path: "/store/templates/{id}/publish",
  summary: "Publish a store template (freezes its templates as a new version)",
  description: [
    "The seller only, with a complete seller profile. The packaged templates' current content becomes a new version, which buyers receive.",
    "First the plagiarism check compares it with every other published template: at or above the configured similarity",
    "(STORE_PLAGIARISM_THRESHOLD) the publish is refused with 409 `possible_duplicate` and the version waits for an administrator",
    "(status `review`; an already published template keeps selling its previous version). File names that are not portable output",
    "paths (templates saved before a rule existed) are refused with 409 `non_portable_path` naming the template and the path, as buyers' purchases and installs of such a version are.",
  ].join(" "),
  tags,
  auth: "bearer",
  params: storeIdParams,
  responses: {
    200: { description: "Published", schema: saved.extend({ plagiarism_check: plagiarismResource }) },
    409: { description: "Possible duplicate (held for review), the template is withdrawn, or a file name is not a portable output path (`non_portable_path`)" },
  },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    const { config } = ctx.deps;
    const outcome = await ctx.deps.pool.transaction(async (tx) => {
      // Locked first, then read: a publish that waited for a concurrent withdraw must see it
      // (read before the lock, the template came back to the store as published).
      await lockStoreTemplate(tx, params.id);
      const current = await storeTemplateForEdit(tx, params.id, user);
      await requireSeller(tx, config.appKey, user.id);
      if (current.status === "withdrawn") throw conflict("A withdrawn store template cannot be published.");
      const content = await snapshotTemplates(tx, await listSources(tx, params.id));
      if (!content.length) throw invalid({ template_ids: ["The packaged templates no longer exist; choose templates to sell first."] });
      assertPortableVersion(content, "published");
      const version = await insertVersion(tx, params.id, content);
      const check = await checkPlagiarism(tx, { storeTemplateId: params.id, versionId: version.id, threshold: config.store.plagiarismThreshold, checkedBy: null });
      if (check.is_duplicate) {
        if (current.status !== "published") await setStatus(tx, params.id, "review");
      } else {
        await setStatus(tx, params.id, "published", version.id);
      }
      return check;
    });
    if (outcome.is_duplicate) {
      throw new AppError(
        409,
        "possible_duplicate",
        `This template is ${outcome.similarity_score}% similar to published templates (${outcome.similar_templates.join(", ")}); an administrator will review it.`,
      );
    }
    ctx.body = { message: "Store template published.", store_template: await present(ctx, params.id), plagiarism_check: presentCheck(outcome) };
  },
});

export const storeManageRoutes = [create, update, remove, publish];
