/**
 * Closing an account that took part in store sales: a buyer who leaves leaves the sale and
 * the seller's earning in place (and a later refund of it still reverses the earning), and
 * their reviews stop counting in the template's score; a seller who sold can leave too: their unsold templates go, the sold ones are withdrawn and
 * still delivered to their buyers.
 */
import t from "tap";
import { z } from "zod";
import { grantCredits } from "../../../shared/credits/ledger.ts";
import { hashPassword } from "../../../shared/auth/passwords.ts";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { request } from "../../support/http.ts";
import { buildSeller, buildStoreTemplate } from "../../support/storeFactories.ts";
import { buildTemplate } from "../../support/templateFactories.ts";

t.test("closing accounts after store sales", async (t) => {
  const app = await startTestApp(t, { env: { STORE_SELLER_SHARE_PERCENT: "70", STORE_CREDIT_VALUE_CENTS: "10" } });
  const admin = await buildUserWithToken(app.pool, { roles: ["user", "admin"] });
  const seller = await buildSeller(app);
  const template = await buildTemplate(app.pool, { ownerId: seller.user.id }, seller.user.id);
  const storeId = await buildStoreTemplate(app.pool, seller.user.id, [template], { name: "Sold kit", price_type: "credits", price_credits: 500 });
  /** A buyer with 500 credits who bought `storeId`; returns the buyer and the purchase id. */
  const buyerOf = async (id: number) => {
    const buyer = await buildUserWithToken(app.pool);
    await grantCredits(app.pool, { userId: buyer.user.id, amount: 500, reason: "test", referenceType: null, referenceId: null, idempotencyKey: "seed" });
    const res = await request(app.url, "POST", "/api/store/purchase", { token: buyer.token, body: { template_id: id } });
    t.equal(res.status, 201, res.text);
    return { ...buyer, purchaseId: res.body.purchase.id as number };
  };
  const earnings = () =>
    app.pool.any(sql.type(z.object({ purchase_id: z.number(), amount_cents: z.number(), status: z.string() }))`
      select purchase_id, amount_cents, status from seller_earnings where seller_id = ${seller.user.id} order by id`);

  await t.test("a buyer closes their account: the seller keeps the sale and the pending earning", async (t) => {
    const buyer = await buyerOf(storeId);
    const before = (await request(app.url, "GET", "/api/seller/analytics", { token: seller.token })).body.data;
    t.match(before, { total_sales: 1, total_revenue_credits: 500, pending_payout: 35, available_for_payout: 35 });
    const closed = await request(app.url, "DELETE", `/api/admin/users/${buyer.user.id}`, { token: admin.token });
    t.equal(closed.status, 200, closed.text);
    const after = (await request(app.url, "GET", "/api/seller/analytics", { token: seller.token })).body.data;
    t.match(after, { total_sales: 1, total_revenue_credits: 500, pending_payout: 35, available_for_payout: 35 }, "nothing taken from the seller");
    t.same(await earnings(), [{ purchase_id: buyer.purchaseId, amount_cents: 3500, status: "pending" }]);
    t.equal((await request(app.url, "GET", `/api/store/templates/${storeId}`, { token: seller.token })).body.data.sales_count, 1);

    // An administrator may still refund that sale: the earning is reversed, no credits go anywhere.
    const refunded = await request(app.url, "POST", `/api/admin/store/purchases/${buyer.purchaseId}/refund`, { token: admin.token });
    t.equal(refunded.status, 200, refunded.text);
    t.same(await earnings(), [{ purchase_id: buyer.purchaseId, amount_cents: 3500, status: "reversed" }]);
  });

  await t.test("a reviewer closes their account: the template's review count and score follow", async (t) => {
    const kit = await buildStoreTemplate(app.pool, seller.user.id, [template], { name: "Reviewed kit", price_type: "credits", price_credits: 500 });
    const [staying, leaving] = [await buyerOf(kit), await buyerOf(kit)];
    for (const [who, rating] of [[staying, 5], [leaving, 1]] as const) {
      t.equal((await request(app.url, "POST", `/api/store/templates/${kit}/reviews`, { token: who.token, body: { rating } })).status, 201);
    }
    t.match((await request(app.url, "GET", `/api/store/templates/${kit}`, { token: seller.token })).body.data, { review_count: 2, review_score: 3 });
    t.equal((await request(app.url, "DELETE", `/api/admin/users/${leaving.user.id}`, { token: admin.token })).status, 200);
    const shown = (await request(app.url, "GET", `/api/store/templates/${kit}`, { token: seller.token })).body.data;
    t.match(shown, { review_count: 1, review_score: 5 }, "the removed review no longer counts");
    t.equal((await request(app.url, "GET", `/api/store/templates/${kit}/reviews`, { token: seller.token })).body.meta.total, 1);
    t.equal((await request(app.url, "DELETE", `/api/admin/users/${staying.user.id}`, { token: admin.token })).status, 200);
    t.match((await request(app.url, "GET", `/api/store/templates/${kit}`, { token: seller.token })).body.data, { review_count: 0, review_score: null });
  });

  await t.test("a seller who sold closes their account: unsold templates go, buyers keep the sold ones", async (t) => {
    const password = "seller leaving the store";
    const leaving = await buildSeller(app, { passwordHash: await hashPassword(password) });
    const own = await buildTemplate(app.pool, { ownerId: leaving.user.id }, leaving.user.id, { name: "Kept", files: [{ file_name: "kept.txt", content: "kept\n" }] });
    const sold = await buildStoreTemplate(app.pool, leaving.user.id, [own], { name: "Leaving kit", price_type: "credits", price_credits: 500 });
    const unsold = await buildStoreTemplate(app.pool, leaving.user.id, [own], { name: "Unsold kit", price_type: "free" });
    const buyer = await buyerOf(sold);
    const other = await buildUserWithToken(app.pool);

    const closed = await request(app.url, "DELETE", "/api/profile", { token: leaving.token, body: { password } });
    t.equal(closed.status, 200, closed.text);
    const rows = await app.pool.any(sql.type(z.object({ id: z.number(), status: z.string(), seller_id: z.number().nullable() }))`
      select id, status, seller_id from store_templates where id = any(${sql.array([sold, unsold], "int8")}) order by id`);
    t.same(rows, [{ id: sold, status: "withdrawn", seller_id: null }], "the unsold template is deleted, the sold one withdrawn");

    const listed = await request(app.url, "GET", "/api/store/purchases", { token: buyer.token });
    t.equal(listed.status, 200, listed.text);
    t.match(listed.body.data, [{ id: buyer.purchaseId, template: { id: sold, name: "Leaving kit" }, seller: null, status: "completed" }]);
    t.equal((await request(app.url, "GET", `/api/store/templates/${sold}/download`, { token: buyer.token })).status, 200, "the buyer still downloads");
    const project = await buildProject(app.pool, buyer.user.id);
    const installed = await request(app.url, "POST", `/api/store/templates/${sold}/install`, { token: buyer.token, body: { project_id: project } });
    t.equal(installed.status, 201, installed.text);
    t.equal((await request(app.url, "GET", `/api/store/templates/${sold}/download`, { token: other.token })).status, 404, "hidden from others");
    t.equal((await request(app.url, "POST", "/api/store/purchase", { token: other.token, body: { template_id: sold } })).status, 404);
    t.equal((await request(app.url, "POST", `/api/admin/store/templates/${sold}/approve`, { token: admin.token })).status, 409, "not published again");
    const browse = await request(app.url, "GET", "/api/store/templates?q=Leaving", { token: other.token });
    t.equal(browse.body.meta.total, 0);
    const opened = await request(app.url, "GET", `/api/store/templates/${sold}`, { token: admin.token });
    t.equal(opened.status, 200, `an administrator still opens it: ${opened.text}`);
    t.match(opened.body.data, { id: sold, name: "Leaving kit", full_name: "Leaving kit", status: "withdrawn", creator: null, can_purchase: false });
    t.equal((await request(app.url, "GET", `/api/store/templates/${sold}`, { token: other.token })).status, 404, "anybody else still gets 404");
  });
});
