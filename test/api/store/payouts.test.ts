/**
 * Seller analytics and payouts: the metrics after credit sales and a refund; payout
 * requests checked against the minimum and what is pending; the payouts__process job
 * attaching earnings past the refund hold, writing a SEPA pain.001 file and an
 * administrator marking it paid; a worker killed mid-payout and the retry paying once.
 */
import pg from "pg";
import t from "tap";
import { z } from "zod";
import { grantCredits } from "../../../shared/credits/ledger.ts";
import { sql, type DatabasePool } from "../../../shared/db/pool.ts";
import { createLogger } from "../../../shared/logger.ts";
import { startWorker } from "../../../workers/index.ts";
import { startTestApp } from "../../support/app.ts";
import { buildUserWithToken } from "../../support/factories.ts";
import { request } from "../../support/http.ts";
import { untilWaitingOnLocks } from "../../support/lockWaits.ts";
import { spawnReady } from "../../support/processes.ts";
import { buildSeller, buildStoreTemplate } from "../../support/storeFactories.ts";
import { buildTemplate } from "../../support/templateFactories.ts";
import { until } from "../../support/wait.ts";

const payoutState = (pool: DatabasePool, id: number) =>
  pool.one(sql.type(z.object({ status: z.string(), transferred_cents: z.number().nullable(), sepa_storage_key: z.string().nullable() }))`
    select status, transferred_cents, sepa_storage_key from seller_payouts where id = ${id}`);


/** A seller with `sales` credit sales of 500 credits (3,500 cents each at 70 % and 10 cents a credit), `daysAgo` old. */
async function sellerWithSales(app: Awaited<ReturnType<typeof startTestApp>>, sales: number, daysAgo: number) {
  const seller = await buildSeller(app);
  const template = await buildTemplate(app.pool, { ownerId: seller.user.id }, seller.user.id);
  const storeId = await buildStoreTemplate(app.pool, seller.user.id, [template], { name: "Sold kit", price_type: "credits", price_credits: 500 });
  for (let i = 0; i < sales; i++) {
    const buyer = await buildUserWithToken(app.pool);
    await grantCredits(app.pool, { userId: buyer.user.id, amount: 500, reason: "test", referenceType: null, referenceId: null, idempotencyKey: "seed" });
    const res = await request(app.url, "POST", "/api/store/purchase", { token: buyer.token, body: { template_id: storeId } });
    if (res.status !== 201) throw new Error(res.text);
  }
  await app.pool.query(sql.type(z.object({}))`
    update seller_earnings set created_at = now() - make_interval(days => ${daysAgo}) where seller_id = ${seller.user.id}`);
  return { ...seller, storeId };
}

const env = { STORE_SELLER_SHARE_PERCENT: "70", STORE_CREDIT_VALUE_CENTS: "10", PAYOUT_MINIMUM_EUR: "20", PAYOUT_HOLD_DAYS: "14", PAYOUT_DEBTOR_IBAN: "DE02120300000000202051", PAYOUT_DEBTOR_NAME: "SchemaForge GmbH" };

t.test("analytics and payouts through the job", async (t) => {
  const app = await startTestApp(t, { worker: true, env });
  const admin = await buildUserWithToken(app.pool, { roles: ["user", "admin"] });
  const seller = await sellerWithSales(app, 3, 20);

  await t.test("analytics: the spec's metrics, sales per day and top templates", async (t) => {
    const refundId = await app.pool.oneFirst(sql.type(z.object({ id: z.number() }))`
      select id from store_purchases where store_template_id = ${seller.storeId} order by id limit 1`);
    t.equal((await request(app.url, "POST", `/api/admin/store/purchases/${refundId}/refund`, { token: admin.token })).status, 200);
    const res = await request(app.url, "GET", "/api/seller/analytics", { token: seller.token });
    t.equal(res.status, 200, res.text);
    t.match(res.body.data, { total_sales: 2, total_revenue_credits: 1000, total_revenue_euros: 0, pending_payout: 70, completed_payouts: 0, available_for_payout: 70 });
    t.equal(res.body.data.sales_per_day.length, 30);
    t.equal(res.body.data.sales_per_day.at(-1).sales, 2, "today's sales");
    t.same(res.body.data.top_templates, [{ id: seller.storeId, name: "Sold kit", sales: 2, revenue: { credits: 1000, euros: 0 } }]);
  });

  await t.test("requests: minimum, at most what is pending, sellers only; nothing written when refused", async (t) => {
    const plain = await buildUserWithToken(app.pool);
    t.match(await request(app.url, "POST", "/api/seller/payouts", { token: plain.token, body: { amount: 50 } }), { status: 403, body: { code: "seller_profile_incomplete" } });
    t.match(await request(app.url, "POST", "/api/seller/payouts", { token: seller.token, body: { amount: 19.99 } }), { status: 422, body: { errors: { amount: [/minimum/] } } });
    t.match(await request(app.url, "POST", "/api/seller/payouts", { token: seller.token, body: { amount: 70.01 } }), { status: 422, body: { errors: { amount: [/At most 70/] } } });
    t.match(await request(app.url, "POST", "/api/seller/payouts", { token: seller.token, body: { amount: 30.001 } }), { status: 422 });
    // The administrators' minimum (PUT /admin/settings) replaces PAYOUT_MINIMUM_EUR while it is set.
    t.equal((await request(app.url, "PUT", "/api/admin/settings", { token: admin.token, body: { payout_minimum_eur: 30 } })).status, 200);
    t.match(await request(app.url, "POST", "/api/seller/payouts", { token: seller.token, body: { amount: 25 } }), { status: 422, body: { errors: { amount: [/minimum payout is 30 EUR/] } } });
    t.equal((await request(app.url, "PUT", "/api/admin/settings", { token: admin.token, body: { payout_minimum_eur: null } })).status, 200);
    t.match(await request(app.url, "POST", "/api/seller/payouts", { token: seller.token, body: { amount: 19.99 } }), { status: 422, body: { errors: { amount: [/minimum payout is 20 EUR/] } } });
    t.equal(await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from seller_payouts`), 0);
  });

  await t.test("the job attaches earnings past the hold, stores the transfer file; an administrator marks it paid", async (t) => {
    const res = await request(app.url, "POST", "/api/seller/payouts", { token: seller.token, body: { amount: 40 } });
    t.equal(res.status, 201, res.text);
    t.match(res.body.payout, { amount: 40, status: "requested", transferred_amount: null });
    const id = res.body.payout.id;
    const sent = await until(async () => { const p = await payoutState(app.pool, id); return p.status === "sent" ? p : undefined; }, { timeoutMs: 60_000, message: "the payout" });
    t.equal(sent.transferred_cents, 3500, "one earning of 35 EUR fits in 40");
    const xml = (await app.deps.storage.readBuffer(sent.sepa_storage_key!))!.toString("utf8");
    t.match(xml, /<InstdAmt Ccy="EUR">35\.00<\/InstdAmt>/);
    t.match(xml, /<CdtrAcct><Id><IBAN>DE89370400440532013000<\/IBAN>/);
    t.match(xml, /<DbtrAcct><Id><IBAN>DE02120300000000202051<\/IBAN>/);
    t.match(xml, /urn:iso:std:iso:20022:tech:xsd:pain\.001\.001\.03/);
    const file = await fetch(`${app.url}/api/admin/payouts/${id}/transfer-file`, { headers: { authorization: `Bearer ${admin.token}` } });
    t.equal(file.status, 200);
    t.equal(await file.text(), xml);
    t.equal((await request(app.url, "GET", `/api/admin/payouts/${id}/transfer-file`, { token: seller.token })).status, 403);

    t.equal((await request(app.url, "POST", `/api/admin/payouts/${id}/mark-paid`, { token: seller.token })).status, 403);
    const paid = await request(app.url, "POST", `/api/admin/payouts/${id}/mark-paid`, { token: admin.token });
    t.equal(paid.status, 200, paid.text);
    t.match(paid.body.payout, { status: "paid", transferred_amount: 35 });
    t.equal((await request(app.url, "POST", `/api/admin/payouts/${id}/mark-paid`, { token: admin.token })).status, 409);
    const metrics = (await request(app.url, "GET", "/api/seller/analytics", { token: seller.token })).body.data;
    t.match(metrics, { pending_payout: 35, completed_payouts: 35 });
    const listed = await request(app.url, "GET", "/api/seller/payouts", { token: seller.token });
    t.same(listed.body.data.map((p: { id: number; status: string }) => [p.id, p.status]), [[id, "paid"]]);
  });

  await t.test("earnings inside the refund hold are not paid out", async (t) => {
    const fresh = await sellerWithSales(app, 1, 2);
    const res = await request(app.url, "POST", "/api/seller/payouts", { token: fresh.token, body: { amount: 35 } });
    t.equal(res.status, 201);
    const failed = await until(async () => { const p = await payoutState(app.pool, res.body.payout.id); return p.status !== "requested" ? p : undefined; }, { timeoutMs: 60_000, message: "the payout" });
    t.equal(failed.status, "failed");
    t.equal(await app.pool.oneFirst(sql.type(z.object({ status: z.string() }))`select status from seller_earnings where seller_id = ${fresh.user.id}`), "pending");
  });
});

t.test("a worker killed mid-payout: the retry pays once", async (t) => {
  const app = await startTestApp(t, { env });
  const seller = await sellerWithSales(app, 2, 20);
  const workerEnv = { DATABASE_URL: app.db.url, ...env };
  const first = await spawnReady(t, "test/support/workerProcess.ts", workerEnv);
  // Holding a lock on the storage table stops the job between attaching earnings and storing the file.
  const locker = new pg.Client({ connectionString: app.db.url });
  await locker.connect();
  t.teardown(() => locker.end());
  await locker.query("begin");
  await locker.query("lock table stored_files in share row exclusive mode");
  const res = await request(app.url, "POST", "/api/seller/payouts", { token: seller.token, body: { amount: 70 } });
  t.equal(res.status, 201, res.text);
  const id: number = res.body.payout.id;
  await until(async () => { const p = await payoutState(app.pool, id); return p.status === "processing" ? p : undefined; }, { timeoutMs: 60_000, message: "the payout" });
  await first.kill("SIGKILL");
  await locker.query("rollback");
  t.equal((await payoutState(app.pool, id)).status, "processing", "killed after attaching, before the file");
  // The retry may run in any worker: only the killed one had to be a process of its own.
  const retry = await startWorker({ config: app.config, pool: app.pool, log: createLogger("silent") }, { databaseUrl: app.db.url, crontab: "" });
  t.teardown(() => retry.stop());
  const sent = await until(async () => { const p = await payoutState(app.pool, id); return p.status === "sent" ? p : undefined; }, { timeoutMs: 60_000, message: "the payout" });
  t.equal(sent.transferred_cents, 7000);
  const earnings = await app.pool.any(sql.type(z.object({ status: z.string(), payout_id: z.number().nullable() }))`
    select status, payout_id from seller_earnings where seller_id = ${seller.user.id} order by id`);
  t.same(earnings, [{ status: "paid_out", payout_id: id }, { status: "paid_out", payout_id: id }]);
  const files = await app.pool.anyFirst(sql.type(z.object({ key: z.string() }))`select key from stored_files where key like 'payouts/%'`);
  t.same(files, [`payouts/${id}/pain.001.xml`], "one transfer file");
  const job = await until(
    async () => {
      const row = await app.pool.one(sql.type(z.object({ status: z.string(), attempts: z.number() }))`select status, attempts from jobs where kind = 'payouts__process'`);
      return row.status !== "running" ? row : undefined;
    },
    { timeoutMs: 60_000, message: "the payout job to end" },
  );
  t.same(job, { status: "succeeded", attempts: 2 }, "the killed attempt and its retry");
  const xml = (await app.deps.storage.readBuffer(`payouts/${id}/pain.001.xml`))!.toString("utf8");
  t.equal(xml.match(/<CdtTrfTxInf>/g)?.length, 1);
  t.match(xml, /<CtrlSum>70\.00<\/CtrlSum>/);
});

t.test("two payouts of one seller processed at once take different earnings", async (t) => {
  const app = await startTestApp(t, { worker: true, env });
  const seller = await sellerWithSales(app, 2, 20);
  // Another session holds the first earning, so both jobs have read the seller's pending
  // earnings before either attaches any.
  const holder = new pg.Client({ connectionString: app.db.url });
  await holder.connect();
  t.teardown(() => holder.end());
  await holder.query("begin");
  await holder.query("select id from seller_earnings where seller_id = $1 order by id limit 1 for no key update", [seller.user.id]);
  const ids: number[] = [];
  for (let i = 0; i < 2; i++) {
    const res = await request(app.url, "POST", "/api/seller/payouts", { token: seller.token, body: { amount: 35 } });
    t.equal(res.status, 201, res.text);
    ids.push(res.body.payout.id);
  }
  await untilWaitingOnLocks(app.pool, 2, "both payout jobs waiting on the seller's earnings", 30_000);
  await holder.query("commit");
  const done = await Promise.all(
    ids.map((id) => until(async () => { const p = await payoutState(app.pool, id); return p.status === "sent" ? p : undefined; }, { timeoutMs: 60_000, message: `payout ${id}` })),
  );
  t.same(done.map((p) => p.transferred_cents), [3500, 3500]);
  const earnings = await app.pool.any(sql.type(z.object({ status: z.string(), payout_id: z.number().nullable() }))`
    select status, payout_id from seller_earnings where seller_id = ${seller.user.id} order by id`);
  t.same(earnings.map((e) => e.status), ["paid_out", "paid_out"], "both earnings paid out");
  t.same(earnings.map((e) => e.payout_id).sort(), [...ids].sort(), "each by its own payout");
  const transferred = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
    select coalesce(sum(transferred_cents), 0)::int as n from seller_payouts where seller_id = ${seller.user.id}`);
  t.equal(transferred, 7000, "no more paid out than was earned");
});

t.test("a refund after a payout request: nothing more is available, never a negative amount", async (t) => {
  const app = await startTestApp(t, { env });
  const admin = await buildUserWithToken(app.pool, { roles: ["user", "admin"] });
  const seller = await sellerWithSales(app, 2, 20);
  t.equal((await request(app.url, "POST", "/api/seller/payouts", { token: seller.token, body: { amount: 70 } })).status, 201);
  const purchaseId = await app.pool.oneFirst(sql.type(z.object({ id: z.number() }))`
    select id from store_purchases where store_template_id = ${seller.storeId} order by id limit 1`);
  t.equal((await request(app.url, "POST", `/api/admin/store/purchases/${purchaseId}/refund`, { token: admin.token })).status, 200);
  const metrics = (await request(app.url, "GET", "/api/seller/analytics", { token: seller.token })).body.data;
  t.match(metrics, { pending_payout: 35, available_for_payout: 0 });
  t.match(await request(app.url, "POST", "/api/seller/payouts", { token: seller.token, body: { amount: 20 } }), { status: 422, body: { errors: { amount: ["At most 0 EUR can be paid out now."] } } });
});

t.test("analytics of a seller whose sums pass the 32-bit range", async (t) => {
  const app = await startTestApp(t, { env });
  const seller = await sellerWithSales(app, 1, 20);
  // 300 sales at the highest credit price: 3,000,000,000 credits and 21,000,000,000 cents earned.
  await app.pool.query(sql.type(z.object({}))`
    with sold as (
      insert into store_purchases (buyer_id, store_template_id, version_id, payment_type, price_credits)
      select null, st.id, st.current_version_id, 'credits', 10000000 from store_templates st, generate_series(1, 300) where st.id = ${seller.storeId}
      returning id)
    insert into seller_earnings (seller_id, purchase_id, amount_cents, amount_credits, created_at)
    select ${seller.user.id}, id, 70000000, 10000000, now() - interval '20 days' from sold`);
  const res = await request(app.url, "GET", "/api/seller/analytics", { token: seller.token });
  t.equal(res.status, 200, res.text);
  t.match(res.body.data, { total_sales: 301, total_revenue_credits: 3_000_000_500, pending_payout: 210_000_035, available_for_payout: 210_000_035 });
  t.equal(res.body.data.sales_per_day.at(-1).revenue_credits, 3_000_000_500);
  t.same(res.body.data.top_templates.map((x: { revenue: { credits: number } }) => x.revenue.credits), [3_000_000_500]);
  const payout = await request(app.url, "POST", "/api/seller/payouts", { token: seller.token, body: { amount: 20 } });
  t.equal(payout.status, 201, payout.text);
});

t.test("a payout whose seller removed the IBAN fails without taking earnings or writing a file", async (t) => {
  const app = await startTestApp(t, { env });
  const seller = await sellerWithSales(app, 1, 20);
  const res = await request(app.url, "POST", "/api/seller/payouts", { token: seller.token, body: { amount: 35 } });
  t.equal(res.status, 201, res.text);
  const cleared = await request(app.url, "PUT", "/api/profile/seller", { token: seller.token, body: { is_seller: true, bank_iban: null } });
  t.equal(cleared.status, 200, cleared.text);
  const worker = await startWorker({ config: app.config, pool: app.pool, log: createLogger("silent") }, { databaseUrl: app.db.url, crontab: "" });
  t.teardown(() => worker.stop());
  const done = await until(async () => { const p = await payoutState(app.pool, res.body.payout.id); return p.status !== "requested" ? p : undefined; }, { timeoutMs: 60_000, message: "the payout" });
  t.same(done, { status: "failed", transferred_cents: null, sepa_storage_key: null });
  const listed = (await request(app.url, "GET", "/api/seller/payouts", { token: seller.token })).body.data[0];
  t.match(listed, { status: "failed", failure: /IBAN/ });
  t.equal(await app.pool.oneFirst(sql.type(z.object({ status: z.string() }))`select status from seller_earnings where seller_id = ${seller.user.id}`), "pending", "the earning stays to be paid later");
});
