import t from "tap";
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
