/**
 * Reviews of store templates: one per buyer and template, rating 1–5; the template's
 * `review_score` (mean) and `review_count` change in the same transaction. Helpful votes:
 * one per user and review, never on one's own.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";
import { conflict, forbidden, notFound } from "../errors.ts";
import { lockStoreTemplate } from "./catalog.ts";
import { findPurchase } from "./purchases.ts";

export const reviewRow = z.object({
  id: z.number(),
  store_template_id: z.number(),
  reviewer_id: z.number(),
  reviewer_username: z.string(),
  reviewer_name: z.string(),
  rating: z.number(),
  comment: z.string(),
  helpful_count: z.number(),
  created_at: z.date(),
});
export type ReviewRow = z.infer<typeof reviewRow>;

const columns = sql.fragment`r.id, r.store_template_id, r.reviewer_id, u.username as reviewer_username, u.name as reviewer_name,
  r.rating, r.comment, r.helpful_count, r.created_at`;

/**
 * Records `reviewerId`'s review of a template they bought and refreshes its score.
 * @throws 403 when they did not buy it, 409 when they reviewed it before
 */
export async function insertReview(tx: CommonQueryMethods, input: { storeTemplateId: number; reviewerId: number; rating: number; comment: string }): Promise<ReviewRow> {
  if (!(await findPurchase(tx, input.reviewerId, input.storeTemplateId))) throw forbidden("Only buyers can review a template.");
  // Reviews of one template are written one at a time: the score below is computed from the
  // reviews its statement sees, and a statement that only waited on the template row's lock
  // would not see a review committed meanwhile (four at once counted as one).
  await lockStoreTemplate(tx, input.storeTemplateId);
  const id = await tx.maybeOneFirst(sql.type(z.object({ id: z.number() }))`
    insert into store_reviews (store_template_id, reviewer_id, rating, comment)
    values (${input.storeTemplateId}, ${input.reviewerId}, ${input.rating}, ${input.comment})
    on conflict (store_template_id, reviewer_id) do nothing returning id`);
  if (id === null) throw conflict("You reviewed this template before.", "already_reviewed");
  await tx.query(sql.type(z.object({}))`
    update store_templates st set review_count = s.n, review_score = s.mean
    from (select count(*)::int as n, round(avg(rating), 2) as mean from store_reviews where store_template_id = ${input.storeTemplateId}) s
    where st.id = ${input.storeTemplateId}`);
  return (await findReview(tx, id))!;
}

/** One review. */
export async function findReview(conn: CommonQueryMethods, id: number): Promise<ReviewRow | null> {
  return conn.maybeOne(sql.type(reviewRow)`select ${columns} from store_reviews r join users u on u.id = r.reviewer_id where r.id = ${id}`);
}

/** A page of a template's reviews, most helpful first, and the total. */
export async function listReviews(conn: CommonQueryMethods, storeTemplateId: number, page: { page: number; rows: number }) {
  const rows = await conn.any(sql.type(reviewRow.extend({ total: z.number() }))`
    select ${columns}, count(*) over ()::int as total from store_reviews r join users u on u.id = r.reviewer_id
    where r.store_template_id = ${storeTemplateId}
    order by r.helpful_count desc, r.id desc
    limit ${page.rows} offset ${(page.page - 1) * page.rows}`);
  return { rows: rows.map(({ total: _t, ...row }) => row), total: rows[0]?.total ?? 0 };
}

/**
 * Counts `userId`'s helpful vote on a review.
 * @throws 404 unknown review, 403 own review, 409 voted before
 */
export async function voteReview(tx: CommonQueryMethods, reviewId: number, userId: number): Promise<ReviewRow> {
  const review = await findReview(tx, reviewId);
  if (!review) throw notFound("Review");
  if (review.reviewer_id === userId) throw forbidden("You cannot vote for your own review.");
  const voted = await tx.maybeOneFirst(sql.type(z.object({ review_id: z.number() }))`
    insert into store_review_votes (review_id, user_id) values (${reviewId}, ${userId}) on conflict do nothing returning review_id`);
  if (voted === null) throw conflict("You marked this review helpful before.", "already_voted");
  await tx.query(sql.type(z.object({}))`update store_reviews set helpful_count = helpful_count + 1 where id = ${reviewId}`);
  return (await findReview(tx, reviewId))!;
}
