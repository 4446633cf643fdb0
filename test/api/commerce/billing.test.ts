import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { isPatron } from "../../../shared/patrons/membership.ts";
import { startTestApp } from "../../support/app.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { client, request } from "../../support/http.ts";
import { creditState, eventsSettled } from "../../support/payments.ts";
import { startStripeStandIn } from "../../support/peers/stripePeer.ts";

t.test("invoices, plan and patron payments by card, saved cards, admin report and adjustments", async (t) => {
  const stripe = await startStripeStandIn();
  t.teardown(() => stripe.close());
  const app = await startTestApp(t, {
    worker: true,
    env: stripe.env,
  });
  const { user, token } = await buildUserWithToken(app.pool);
  await app.pool.query(sql.type(z.object({}))`update users set company_name = 'Acme GmbH', company_country = 'DE', vat_id = 'DE123456789' where id = ${user.id}`);
  const me = client(app.url, token);
  const admin = client(app.url, (await buildUserWithToken(app.pool, { roles: ["admin"] })).token);
  const pay = async (transaction: { provider_payment_id: string }) => {
    const intent = stripe.intents.get(transaction.provider_payment_id)!;
    const { body, signature } = stripe.signed(stripe.event("payment_intent.succeeded", { ...intent, status: "succeeded" }));
    const res = await request(app.url, "POST", "/api/cardprocessor/webhook", { raw: true, body, headers: { "content-type": "application/json", "stripe-signature": signature } });
    t.equal(res.status, 200);
    await eventsSettled(app.pool);
  };

  const bought = await me.post("/api/credits/purchase", { package_id: 1, payment_method: "cardprocessor" });
  await pay(bought.body.transaction);
  const invoices = await me.get("/api/billing/invoices");
  t.equal(invoices.status, 200, invoices.text);
  t.equal(invoices.body.meta.total, 1, "one invoice for the succeeded payment");
  const invoice = invoices.body.data[0];
  t.match(invoice, { transaction_id: bought.body.transaction.id, total_cents: 500, vat_rate: 19, currency: "EUR", buyer: { company: "Acme GmbH", country: "DE", vat_id: "DE123456789" } });
  t.equal(invoice.net_cents + invoice.vat_cents, invoice.total_cents);
  t.equal(invoice.net_cents, 420, "prices include German VAT");
  t.match(invoice.number, /^INV-\d{4}-000001$/);
  const pdf = await fetch(`${app.url}/api/billing/invoices/${invoice.id}/pdf`, { headers: { authorization: `Bearer ${token}` } });
  t.equal(pdf.status, 200);
  t.equal(pdf.headers.get("content-type"), "application/pdf");
  t.equal(Buffer.from(await pdf.arrayBuffer()).subarray(0, 5).toString(), "%PDF-", "a PDF document");
  const stranger = client(app.url, (await buildUserWithToken(app.pool)).token);
  t.equal((await stranger.get(`/api/billing/invoices/${invoice.id}`)).status, 404, "another user's invoice is not found");
  t.equal((await stranger.get(`/api/billing/invoices/${invoice.id}/pdf`)).status, 404);

  await t.test("a plan paid by card starts when the payment arrives", async (t) => {
    const projectId = await buildProject(app.pool, user.id);
    const plans = (await me.get("/api/plans")).body.data as { id: number; code: string; price_cents: number }[];
    const pro = plans.find((p) => p.code === "pro")!;
    const started = await me.post("/api/billing/subscription", { project_id: projectId, plan_id: pro.id, payment_method: "cardprocessor" });
    t.equal(started.status, 202, started.text);
    t.equal(started.body.transaction.amount_cents, pro.price_cents);
    await pay(started.body.transaction);
    const billing = await me.get("/api/billing/subscription");
    t.equal(billing.body.plan.code, "pro", "the caller's plan is now pro");
    t.ok(billing.body.subscriptions.some((s: { project_id: number; plan_id: number }) => s.project_id === projectId && s.plan_id === pro.id));
    t.equal((await creditState(app.pool, user.id)).balance, 100, "a plan payment grants no package credits");
  });

  await t.test("a patron level paid by card", async (t) => {
    const started = await me.post("/api/patron/subscribe", { level: 2, payment_method: "cardprocessor" });
    t.equal(started.status, 202, started.text);
    t.equal(await isPatron(app.pool, user.id), false, "not before the payment");
    await pay(started.body.transaction);
    t.equal(await isPatron(app.pool, user.id), true);
    t.equal((await me.get("/api/billing/invoices")).body.meta.total, 3, "every succeeded payment has its invoice");

    await app.pool.query(sql.type(z.object({}))`insert into patron_levels (level, name, price_credits, price_cents) values (9, 'Friend', 10, 0)`);
    const free = await me.post("/api/patron/subscribe", { level: 9, payment_method: "cardprocessor" });
    t.equal(free.status, 422, `a level not sold for money is refused by card, as a plan is: ${free.text}`);
    t.match(free.body, { code: "validation_failed", errors: { payment_method: [/credits/] } });
  });

  await t.test("saving a card creates the customer once and a SetupIntent each time", async (t) => {
    const first = await me.post("/api/billing/payment-method");
    t.equal(first.status, 200, first.text);
    t.ok(stripe.setupIntents.get(first.body.setup_intent_id), "the SetupIntent exists at the card processor");
    t.equal(first.body.client_secret, stripe.setupIntents.get(first.body.setup_intent_id)!.client_secret);
    const second = await me.post("/api/billing/payment-method");
    t.equal(stripe.setupIntents.get(second.body.setup_intent_id)!.customer, stripe.setupIntents.get(first.body.setup_intent_id)!.customer, "same customer");
    t.equal(stripe.customers.size, 1);
    t.equal((await me.get("/api/billing/subscription")).body.has_payment_method, false, "no card yet: the SetupIntents were not confirmed");
    const setup = stripe.setupIntents.get(second.body.setup_intent_id)!;
    const { body, signature } = stripe.signed(stripe.event("setup_intent.succeeded", { ...setup, object: "setup_intent", status: "succeeded" }));
    t.equal((await request(app.url, "POST", "/api/cardprocessor/webhook", { raw: true, body, headers: { "content-type": "application/json", "stripe-signature": signature } })).status, 200);
    await eventsSettled(app.pool);
    t.equal((await me.get("/api/billing/subscription")).body.has_payment_method, true, "confirmed: a card is saved");
    t.equal((await stranger.get("/api/billing/subscription")).body.has_payment_method, false, "for that user only");
  });

  await t.test("admin billing report and manual adjustments", async (t) => {
    t.equal((await me.get("/api/admin/billing-report")).status, 403, "not for users");
    const report = await admin.get("/api/admin/billing-report?group=month");
    t.equal(report.status, 200, report.text);
    const row = report.body.data.at(-1);
    t.match(row, { payments: 3, cardprocessor_cents: row.revenue_cents, walletprovider_cents: 0, credits_sold: 100, refunds: 0 });
    const csv = await admin.get("/api/admin/billing-report?format=csv&group=month");
    t.equal(csv.headers.get("content-type"), "text/csv; charset=utf-8");
    t.match(csv.text, /^period,revenue_cents,cardprocessor_cents/);
    t.equal((await admin.get("/api/admin/billing-report?from=2026-02-30")).status, 422);

    t.equal((await me.post(`/api/admin/users/${user.id}/credits`, { amount: 50, reason: "goodwill" })).status, 403);
    const added = await admin.post(`/api/admin/users/${user.id}/credits`, { amount: 50, reason: "goodwill" }, { headers: { "idempotency-key": "ticket-17" } });
    t.match(added.body, { balance: 150, replayed: false });
    const again = await admin.post(`/api/admin/users/${user.id}/credits`, { amount: 50, reason: "goodwill" }, { headers: { "idempotency-key": "ticket-17" } });
    t.match(again.body, { balance: 150, replayed: true }, "the same key applies once");
    const tooMuch = await admin.post(`/api/admin/users/${user.id}/credits`, { amount: -151, reason: "correction" });
    t.equal(tooMuch.status, 402, "a deduction beyond the balance");
    const taken = await admin.post(`/api/admin/users/${user.id}/credits`, { amount: -20, reason: "correction" });
    t.equal(taken.body.balance, 130);
    t.equal((await admin.post(`/api/admin/users/${user.id}/credits`, { amount: 0, reason: "nothing" })).status, 422);
    t.equal((await admin.post(`/api/admin/users/999999/credits`, { amount: 5, reason: "nobody" })).status, 404);
    // The balance is an integer column: grants past its maximum are refused on the amount, not a 500.
    t.equal((await admin.post(`/api/admin/users/${user.id}/credits`, { amount: 1_000_000_000, reason: "big" })).status, 200);
    t.equal((await admin.post(`/api/admin/users/${user.id}/credits`, { amount: 1_000_000_000, reason: "bigger" })).body.balance, 2_000_000_130);
    const overflow = await admin.post(`/api/admin/users/${user.id}/credits`, { amount: 1_000_000_000, reason: "too big" });
    t.equal(overflow.status, 422, overflow.text);
    t.match(overflow.body, { code: "validation_failed", errors: { amount: [/at most 147483517 more/] } });
    t.equal((await me.get("/api/credits")).body.data[0].reason, "admin_adjustment: bigger", "the refused grant wrote nothing");
    const ledger = (await me.get("/api/credits")).body.data;
    t.match(ledger[2], { amount: -20, reason: "admin_adjustment: correction", reference_type: "admin_user" });

    // Each balance fits its integer column; a month's sums of them need not.
    for (const amount of [-1_000_000_000, -1_000_000_000, 1_000_000_000, -1_000_000_000]) {
      t.equal((await admin.post(`/api/admin/users/${user.id}/credits`, { amount, reason: "churn" })).status, 200);
    }
    const big = await admin.get("/api/admin/billing-report?group=month");
    t.equal(big.status, 200, big.text);
    t.equal(big.body.data.at(-1).credits_spent, 3_000_000_020, "three billion credits spent in a month are reported, not a 500");
  });
});
