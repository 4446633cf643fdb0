/**
 * Reviews of store templates (spec Review: id, template_id, reviewer, rating 1–5, comment,
 * helpful_count, created_at) and helpful votes.
 */
import { z } from "zod";
import { notFound } from "../../../shared/errors.ts";
import { findReview, insertReview, listReviews, voteReview, type ReviewRow } from "../../../shared/store/reviews.ts";
import { currentUser } from "../../context.ts";
import { defineRoute } from "../route.ts";
import { canViewStoreTemplate } from "./load.ts";
import { storeIdParams, storePage, storePageQuery, storePageSchema } from "./store.schema.ts";
import { findStoreTemplate } from "../../../shared/store/catalog.ts";

const tags = ["Template store"];

const reviewResource = z.object({
  id: z.number(),
  template_id: z.number(),
  reviewer: z.object({ id: z.number(), username: z.string(), name: z.string() }),
  rating: z.number().int().min(1).max(5),
  comment: z.string(),
  helpful_count: z.number(),
  created_at: z.string(),
});

const presentReview = (row: ReviewRow) => ({
  id: row.id,
  template_id: row.store_template_id,
  reviewer: { id: row.reviewer_id, username: row.reviewer_username, name: row.reviewer_name },
  rating: row.rating,
  comment: row.comment,
  helpful_count: row.helpful_count,
  created_at: row.created_at.toISOString(),
});

const create = defineRoute({
  method: "post",
  path: "/store/templates/{id}/reviews",
  summary: "Review a template you bought",
  description: "`rating` 1 to 5, `comment` (optional). Buyers only (403 otherwise), once per template (409 `already_reviewed`). The template's review_score is the mean of its ratings.",
  tags,
  auth: "bearer",
  params: storeIdParams,
  body: z.object({ rating: z.number().int().min(1).max(5), comment: z.string().trim().max(5000).default("") }),
  responses: { 201: { description: "Created", schema: z.object({ message: z.string(), review: reviewResource }) }, 409: { description: "Reviewed before" } },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const review = await ctx.deps.pool.transaction(async (tx) => {
      // Buyers of a withdrawn template may still review what they bought.
      const template = await findStoreTemplate(tx, params.id, user.id);
      if (!template || (!canViewStoreTemplate(user, template) && !template.is_purchased)) throw notFound("Store template");
      return insertReview(tx, { storeTemplateId: params.id, reviewerId: user.id, rating: body.rating, comment: body.comment });
    });
    ctx.status = 201;
    ctx.body = { message: "Review added.", review: presentReview(review) };
  },
});

const list = defineRoute({
  method: "get",
  path: "/store/templates/{id}/reviews",
  summary: "Reviews of a store template, most helpful first",
  description: "Of a template you may see, or one you bought that was withdrawn since (whose buyers may still review it).",
  tags,
  auth: "bearer",
  params: storeIdParams,
  query: storePageQuery,
  responses: { 200: { description: "One page", schema: storePageSchema(reviewResource) } },
  handler: async (ctx, { params, query }) => {
    const user = currentUser(ctx);
    // As for writing one: buyers of a withdrawn template still read its reviews.
    const template = await findStoreTemplate(ctx.deps.pool, params.id, user.id);
    if (!template || (!canViewStoreTemplate(user, template) && !template.is_purchased)) throw notFound("Store template");
    const { rows, total } = await listReviews(ctx.deps.pool, params.id, query);
    ctx.body = storePage(rows.map(presentReview), total, query);
  },
});

const vote = defineRoute({
  method: "post",
  path: "/reviews/{id}/vote",
  summary: "Mark a review helpful",
  description: "One vote per user and review (409 `already_voted`), never on your own review (403).",
  tags,
  auth: "bearer",
  params: storeIdParams,
  responses: { 200: { description: "Counted", schema: z.object({ message: z.string(), review: reviewResource }) }, 409: { description: "Voted before" } },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    const review = await ctx.deps.pool.transaction(async (tx) => {
      const existing = await findReview(tx, params.id);
      const template = existing && (await findStoreTemplate(tx, existing.store_template_id, user.id));
      if (!template || (!canViewStoreTemplate(user, template) && !template.is_purchased)) throw notFound("Review");
      return voteReview(tx, params.id, user.id);
    });
    ctx.body = { message: "Marked helpful.", review: presentReview(review) };
  },
});

export const storeReviewRoutes = [create, list, vote];
