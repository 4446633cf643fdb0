import t from "tap";
import { z } from "zod";
import { sql } from "../../shared/db/pool.ts";
import { grantCredits, spendCredits } from "../../shared/credits/ledger.ts";
import { startTestApp } from "../support/app.ts";
import { buildUserWithToken } from "../support/factories.ts";
import { client, request } from "../support/http.ts";

t.test("GET /credits: the caller's balance and ledger, newest first, paginated", async (t) => {
  const app = await startTestApp(t);
  const { user, token } = await buildUserWithToken(app.pool);
  const other = await buildUserWithToken(app.pool);
  const me = client(app.url, token);

  t.equal((await request(app.url, "GET", "/api/credits")).status, 401, "401 without a token");
  const empty = await me.get("/api/credits");
  t.equal(empty.status, 200, empty.text);
  t.match(empty.body, { balance: 0, shortfall: 0, data: [], meta: { total: 0 } }, "a user who never held credits");

  await grantCredits(app.pool, { userId: user.id, amount: 50, reason: "package_purchase", referenceType: "credit_transaction", referenceId: "7", idempotencyKey: "g1" });
  for (let i = 0; i < 3; i++) {
    await spendCredits(app.pool, { userId: user.id, amount: 5, reason: "store_purchase", referenceType: null, referenceId: null, idempotencyKey: `s${i}` });
  }
  await grantCredits(app.pool, { userId: other.user.id, amount: 999, reason: "award", referenceType: null, referenceId: null, idempotencyKey: "g1" });

  const page = await me.get("/api/credits?per_page=2");
  t.equal(page.status, 200);
  t.equal(page.body.balance, 35);
  t.equal(page.body.meta.total, 4, "only the caller's entries");
  t.same(page.body.data.map((e: { amount: number; balance_after: number }) => [e.amount, e.balance_after]), [[-5, 35], [-5, 40]], "newest first");
  const last = await me.get("/api/credits?per_page=2&page=2");
  t.match(last.body.data[1], { amount: 50, balance_after: 50, reason: "package_purchase", reference_type: "credit_transaction", reference_id: "7" });
  t.equal((await me.get("/api/credits?per_page=0")).status, 422, "bad page size: 422");
});

t.test("credit packages: public list, administrators manage them, bought ones are deactivated", async (t) => {
  const app = await startTestApp(t);
  const admin = client(app.url, (await buildUserWithToken(app.pool, { roles: ["admin"] })).token);
  const user = await buildUserWithToken(app.pool);
  const me = client(app.url, user.token);
  const listed = await request(app.url, "GET", "/api/credit-packages");
  t.equal(listed.status, 200);
  t.same(Object.keys(listed.body.data[0]).sort(), ["credits", "currency", "id", "name", "price_cents"], "public fields only");

  t.equal((await me.get("/api/admin/credit-packages")).status, 403);
  t.equal((await me.post("/api/admin/credit-packages", { name: "X", credits: 1, price_cents: 100 })).status, 403);
  t.equal((await admin.post("/api/admin/credit-packages", { name: "", credits: 0, price_cents: 1 })).status, 422);
  for (const currency of ["JPY", "KRW", "BHD", "XYZ"]) {
    const odd = await admin.post("/api/admin/credit-packages", { name: "Odd", credits: 100, price_cents: 500, currency });
    t.equal(odd.status, 422, `${currency}: not a currency priced in hundredths`);
    t.ok(odd.body.errors?.currency, "named on the field");
  }
  t.equal((await admin.put("/api/admin/credit-packages/1", { currency: "JPY" })).status, 422, "nor can a package be changed to one");
  t.equal((await admin.post("/api/admin/credit-packages", { name: "Dollars", credits: 100, price_cents: 500, currency: "USD" })).status, 201, "USD is fine");
  const created = await admin.post("/api/admin/credit-packages", { name: "Mega", credits: 9000, price_cents: 30000 });
  t.equal(created.status, 201, created.text);
  const id = created.body.credit_package.id;
  t.match((await admin.put(`/api/admin/credit-packages/${id}`, { price_cents: 29000 })).body.credit_package, { name: "Mega", price_cents: 29000, is_active: true });
  t.equal((await admin.get(`/api/admin/credit-packages/${id}`)).body.credit_package.price_cents, 29000);
  t.equal((await admin.put(`/api/admin/credit-packages/999999`, { name: "Nope" })).status, 404);
  t.equal((await admin.delete(`/api/admin/credit-packages/${id}`)).body.result, "deleted", "never bought: deleted");
  t.equal((await admin.get(`/api/admin/credit-packages/${id}`)).status, 404);

  await app.pool.query(sql.type(z.object({}))`
    insert into credit_transactions (user_id, package_id, payment_method, credits, amount_cents, currency) values (${user.user.id}, 1, 'cardprocessor', 100, 500, 'EUR')`);
  t.equal((await admin.delete("/api/admin/credit-packages/1")).body.result, "deactivated", "bought: deactivated");
  const after = (await request(app.url, "GET", "/api/credit-packages")).body.data as { id: number }[];
  t.notOk(after.some((p) => p.id === 1), "hidden from the public list");
  t.equal((await me.post("/api/credits/purchase", { package_id: 1, payment_method: "cardprocessor" })).status, 503, "(no provider here)");
});
