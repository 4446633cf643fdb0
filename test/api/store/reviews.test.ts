/**
 * Store reviews: buyers only, once each, rating 1–5; review_score the mean, kept with each
 * review; the list most helpful first with page/rows; helpful votes once per user and never
 * on one's own review.
 */
import pg from "pg";
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildUserWithToken } from "../../support/factories.ts";
import { request } from "../../support/http.ts";
import { untilWaitingOnLocks } from "../../support/lockWaits.ts";
import { buildSeller, buildStoreTemplate } from "../../support/storeFactories.ts";
import { buildTemplate } from "../../support/templateFactories.ts";

t.test("store reviews", async (t) => {
  const app = await startTestApp(t);
  const seller = await buildSeller(app);
  const template = await buildTemplate(app.pool, { ownerId: seller.user.id }, seller.user.id);
  const storeId = await buildStoreTemplate(app.pool, seller.user.id, [template], { price_type: "free" });
  const buyers = await Promise.all([1, 2, 3].map(() => buildUserWithToken(app.pool)));
  const stranger = await buildUserWithToken(app.pool);
  for (const buyer of buyers) t.equal((await request(app.url, "POST", "/api/store/purchase", { token: buyer.token, body: { template_id: storeId } })).status, 201);
  const base = `/api/store/templates/${storeId}/reviews`;
  const review = (token: string, body: unknown) => request(app.url, "POST", base, { token, body });

  const ids: number[] = [];
  await t.test("buyers review once; others are refused", async (t) => {
    t.equal((await review(stranger.token, { rating: 5 })).status, 403, "non-buyer");
    t.equal((await review(seller.token, { rating: 5 })).status, 403, "the seller");
    for (const rating of [0, 6, 4.5, "5"]) t.equal((await review(buyers[0]!.token, { rating })).status, 422, `rating ${String(rating)}`);
    for (const [i, rating] of [5, 4, 2].entries()) {
      const res = await review(buyers[i]!.token, { rating, comment: `Review ${i}` });
      t.equal(res.status, 201, res.text);
      t.match(res.body.review, { template_id: storeId, rating, comment: `Review ${i}`, helpful_count: 0, reviewer: { id: buyers[i]!.user.id } });
      ids.push(res.body.review.id);
    }
    t.match(await review(buyers[0]!.token, { rating: 1 }), { status: 409, body: { code: "already_reviewed" } });
    const shown = await request(app.url, "GET", `/api/store/templates/${storeId}`, { token: stranger.token });
    t.equal(shown.body.data.review_score, 3.67, "mean of 5, 4 and 2");
    t.equal(shown.body.data.review_count, 3);
  });

  await t.test("votes: once per user, not on one's own; the list is most helpful first", async (t) => {
    const vote = (token: string, id: number) => request(app.url, "POST", `/api/reviews/${id}/vote`, { token });
    t.equal((await vote(buyers[2]!.token, ids[2]!)).status, 403, "own review");
    const first = await vote(stranger.token, ids[2]!);
    t.equal(first.status, 200, first.text);
    t.equal(first.body.review.helpful_count, 1);
    t.match(await vote(stranger.token, ids[2]!), { status: 409, body: { code: "already_voted" } });
    t.equal((await vote(buyers[0]!.token, ids[2]!)).body.review.helpful_count, 2);
    t.equal((await vote(buyers[0]!.token, ids[1]!)).body.review.helpful_count, 1);
    t.equal((await vote(stranger.token, 999999)).status, 404);
    const list = await request(app.url, "GET", `${base}?rows=2`, { token: stranger.token });
    t.equal(list.status, 200);
    t.same(list.body.data.map((r: { id: number }) => r.id), [ids[2], ids[1]]);
    t.same(list.body.meta, { current_page: 1, rows: 2, total: 3, last_page: 2 });
    const second = await request(app.url, "GET", `${base}?rows=2&page=2`, { token: stranger.token });
    t.same(second.body.data.map((r: { id: number }) => r.id), [ids[0]]);
  });

  await t.test("a withdrawn template: its buyers still read the reviews they may still write", async (t) => {
    await app.pool.query(sql.type(z.object({}))`update store_templates set status = 'withdrawn' where id = ${storeId}`);
    t.teardown(() => app.pool.query(sql.type(z.object({}))`update store_templates set status = 'published' where id = ${storeId}`));
    const read = await request(app.url, "GET", base, { token: buyers[0]!.token });
    t.equal(read.status, 200, read.text);
    t.equal(read.body.meta.total, 3);
    t.equal((await request(app.url, "GET", base, { token: stranger.token })).status, 404, "hidden from others");
  });

  await t.test("concurrent reviews all count in review_count and review_score", async (t) => {
    const other = await buildStoreTemplate(app.pool, seller.user.id, [template], { name: "Second kit", price_type: "free" });
    const reviewers = await Promise.all([1, 2, 3, 4].map(() => buildUserWithToken(app.pool)));
    for (const r of reviewers) t.equal((await request(app.url, "POST", "/api/store/purchase", { token: r.token, body: { template_id: other } })).status, 201);
    // Another session holds the template row (as a concurrent review's score update would), so
    // all four reviews are under way before any of them commits.
    const holder = new pg.Client({ connectionString: app.db.url });
    await holder.connect();
    t.teardown(() => holder.end());
    await holder.query("begin");
    await holder.query("select id from store_templates where id = $1 for no key update", [other]);
    const pending = Promise.all(
      reviewers.map((r, i) => request(app.url, "POST", `/api/store/templates/${other}/reviews`, { token: r.token, body: { rating: i + 1 } })),
    );
    await untilWaitingOnLocks(app.pool, 4, "four reviews waiting on the template row", 20_000);
    await holder.query("commit");
    t.same((await pending).map((res) => res.status), [201, 201, 201, 201]);
    const shown = await request(app.url, "GET", `/api/store/templates/${other}`, { token: stranger.token });
    t.equal(shown.body.data.review_count, 4, "every review counted");
    t.equal(shown.body.data.review_score, 2.5, "mean of 1, 2, 3 and 4");
  });
});
