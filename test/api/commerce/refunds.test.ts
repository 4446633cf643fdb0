import t from "tap";
import { z } from "zod";
import { grantCredits } from "../../../shared/credits/ledger.ts";
import { awardMonthlyCredits } from "../../../shared/credits/monthly.ts";
import { sql } from "../../../shared/db/pool.ts";
import { createLogger } from "../../../shared/logger.ts";
import { currentPatronPeriod } from "../../../shared/patrons/membership.ts";
import { runPatronRenewals } from "../../../shared/patrons/renewal.ts";
import { startTestApp } from "../../support/app.ts";
import { buildUserWithToken } from "../../support/factories.ts";
import { client, request } from "../../support/http.ts";
import { automaticRefund, creditState, eventsSettled, refundsSettled } from "../../support/payments.ts";
import { startStripeStandIn } from "../../support/peers/stripePeer.ts";

t.test("a refunded card payment takes back what it bought", async (t) => {
  const stripe = await startStripeStandIn();
  t.teardown(() => stripe.close());
  const app = await startTestApp(t, { worker: true, env: stripe.env });
  const { user, token } = await buildUserWithToken(app.pool);
  const me = client(app.url, token);
  const deliver = async (event: object) => {
    const { body, signature } = stripe.signed(event);
    const res = await request(app.url, "POST", "/api/cardprocessor/webhook", { raw: true, body, headers: { "content-type": "application/json", "stripe-signature": signature } });
    t.equal(res.status, 200, `the webhook is accepted: ${res.text}`);
    await eventsSettled(app.pool);
  };
  const succeeded = (transaction: { provider_payment_id: string }) => {
    const intent = stripe.intents.get(transaction.provider_payment_id)!;
    return deliver(stripe.event("payment_intent.succeeded", { ...intent, status: "succeeded" }));
  };
  const refunded = (transaction: { provider_payment_id: string }) => deliver(stripe.event("charge.refunded", stripe.refundedCharge(transaction.provider_payment_id)));
  const monthAward = (userId: number) => app.pool.oneFirst(sql.type(z.object({ credits: z.number() }))`select credits from credit_monthly_awards where user_id = ${userId}`);
  const transactionStatus = (id: number) => app.pool.oneFirst(sql.type(z.object({ status: z.string() }))`select status from credit_transactions where id = ${id}`);

  await t.test("a refunded plan payment ends the period it started: the project is soft-locked as after a lapse", async (t) => {
    const plans = (await me.get("/api/plans")).body.data as { id: number; code: string }[];
    const pro = plans.find((p) => p.code === "pro")!;
    const project = (await me.post("/api/projects", { name: "Paid by card" })).body.project;
    const started = await me.post("/api/subscriptions", { project_id: project.id, plan_id: pro.id, payment_method: "cardprocessor" });
    t.equal(started.status, 202, started.text);
    await succeeded(started.body.transaction);
    t.equal((await me.get("/api/billing/subscription")).body.plan.code, "pro", "paid: the plan is pro");

    await refunded(started.body.transaction);
    t.equal(await transactionStatus(started.body.transaction.id), "refunded");
    const billing = await me.get("/api/billing/subscription");
    t.equal(billing.body.plan.code, "free", "refunded: the plan is no longer pro");
    const sub = (await me.get("/api/subscriptions")).body.data.find((s: { project_id: number; plan_id: number }) => s.project_id === project.id && s.plan_id === pro.id);
    t.match(sub, { is_expired: true, auto_renew: false }, "the period is over and will not renew");
    const write = await me.put(`/api/projects/${project.id}`, { name: "Still mine?" });
    t.equal(write.status, 402, "the project is soft-locked, as when a period lapses");
    t.equal(write.body.code, "subscription_expired");
  });

  await t.test("a refunded patron payment ends its period; one that had not begun is removed", async (t) => {
    const started = await me.post("/api/patron/subscribe", { level: 2, payment_method: "cardprocessor" });
    await succeeded(started.body.transaction);
    t.equal((await currentPatronPeriod(app.pool, user.id))?.level, 2, "paid: a level-2 patron");
    await refunded(started.body.transaction);
    t.equal(await currentPatronPeriod(app.pool, user.id), null, "refunded: no longer a patron");
    const lapsed = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      select count(*)::int as n from patron_memberships where user_id = ${user.id} and lapsed_at is null and renewed_at is null`);
    t.equal(lapsed, 0, "and the renewal job has nothing to renew");

    await grantCredits(app.pool, { userId: user.id, amount: 300, reason: "test", referenceType: null, referenceId: null, idempotencyKey: "patron-credits" });
    t.equal((await me.post("/api/patron/subscribe", { level: 1 })).status, 201, "level 1 bought with credits");
    const next = await me.post("/api/patron/subscribe", { level: 3, payment_method: "cardprocessor" });
    await succeeded(next.body.transaction);
    await refunded(next.body.transaction);
    t.equal((await currentPatronPeriod(app.pool, user.id))?.level, 1, "the running period paid in credits stays");
    const queued = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      select count(*)::int as n from patron_memberships where transaction_id = ${next.body.transaction.id}`);
    t.equal(queued, 0, "the refunded period that was to follow it is gone");
  });

  await t.test("refunding a card period that was to follow the running one gives the running one its renewal back; later periods move up", async (t) => {
    const patron = await buildUserWithToken(app.pool);
    const as = client(app.url, patron.token);
    await grantCredits(app.pool, { userId: patron.user.id, amount: 2000, reason: "test", referenceType: null, referenceId: null, idempotencyKey: "follow" });
    const periods = () =>
      app.pool.any(sql.type(z.object({ level: z.number(), started_at: z.date(), expires_at: z.date() }))`
        select level, started_at, expires_at from patron_memberships where user_id = ${patron.user.id} order by started_at`);
    /** Periods of the patron after the daily run at `at`. */
    const renewalsAt = async (at: Date) => {
      await runPatronRenewals(app.pool, at, createLogger("silent"));
      return (await periods()).length;
    };
    t.equal((await as.post("/api/patron/subscribe", { level: 1 })).status, 201, "level 1 bought with credits, running");
    const [running] = await periods();
    const card = await as.post("/api/patron/subscribe", { level: 3, payment_method: "cardprocessor" });
    await succeeded(card.body.transaction);
    t.equal((await as.post("/api/patron/subscribe", { level: 2 })).status, 201, "level 2 bought with credits after it");
    t.same((await periods()).map((p) => p.level), [1, 3, 2]);
    await refunded(card.body.transaction);
    const left = await periods();
    t.same(left.map((p) => p.level), [1, 2], "the refunded period is gone");
    t.equal(left[1]!.started_at.getTime(), running!.expires_at.getTime(), "the one after it starts when the running one ends: no gap");

    // A running card period refunded: it ends now, and the one bought to follow it starts now.
    const ending = await buildUserWithToken(app.pool);
    const asRunning = client(app.url, ending.token);
    await grantCredits(app.pool, { userId: ending.user.id, amount: 300, reason: "test", referenceType: null, referenceId: null, idempotencyKey: "running" });
    const paidByCard = await asRunning.post("/api/patron/subscribe", { level: 3, payment_method: "cardprocessor" });
    await succeeded(paidByCard.body.transaction);
    t.equal((await asRunning.post("/api/patron/subscribe", { level: 1 })).status, 201, "level 1 bought to follow the running level 3");
    await refunded(paidByCard.body.transaction);
    t.equal((await currentPatronPeriod(app.pool, ending.user.id))?.level, 1, "level 1 runs from now on, no gap until level 3 would have ended");

    // Without a later period, the running one is the latest again and renews as before the purchase.
    const second = await as.post("/api/patron/subscribe", { level: 3, payment_method: "cardprocessor" });
    await succeeded(second.body.transaction);
    await refunded(second.body.transaction);
    const last = (await periods()).at(-1)!;
    t.equal(last.level, 2);
    t.match((await as.get("/api/patron/levels")).body.status, { is_patron: true, patron_level: 1, cancelled: false });
    t.equal(await renewalsAt(new Date(last.expires_at.getTime() + 1000)), 3, "the daily run renews it: a third period");

    // A cancellation made before buying the next period counts again once that period is refunded.
    t.equal((await as.post("/api/patron/cancel")).status, 200);
    const third = await as.post("/api/patron/subscribe", { level: 3, payment_method: "cardprocessor" });
    await succeeded(third.body.transaction);
    t.match((await as.get("/api/patron/levels")).body.status, { cancelled: false }, "a period bought after cancelling continues the membership");
    await refunded(third.body.transaction);
    t.match((await as.get("/api/patron/levels")).body.status, { cancelled: true }, "refunded: cancelled again, as before the purchase");
  });

  await t.test("a partial refund takes back the same share of the credits; the payment is refunded once all of it is back", async (t) => {
    const bought = await me.post("/api/credits/purchase", { package_id: 1, payment_method: "cardprocessor" });
    const { id, credits, amount_cents: amount, provider_payment_id: intentId } = bought.body.transaction as { id: number; credits: number; amount_cents: number; provider_payment_id: string };
    t.same([credits, amount], [100, 500], "the seeded starter package: 100 credits for 5 euros");
    const start = (await creditState(app.pool, user.id)).balance;
    await succeeded(bought.body.transaction);
    const refundedSoFar = (cents: number) =>
      deliver(stripe.event("charge.refunded", { ...stripe.refundedCharge(intentId), amount_refunded: cents, refunded: cents === amount }));
    const state = async () => ({
      balance: (await creditState(app.pool, user.id)).balance - start,
      ...(await app.pool.one(sql.type(z.object({ status: z.string(), refunded_cents: z.number() }))`select status, refunded_cents from credit_transactions where id = ${id}`)),
    });

    await refundedSoFar(100);
    t.same(await state(), { balance: 80, status: "succeeded", refunded_cents: 100 }, "1 euro of 5 back: 20 of the 100 credits taken, the payment still counts");
    await refundedSoFar(100);
    t.same(await state(), { balance: 80, status: "succeeded", refunded_cents: 100 }, "the same total again (another event id) changes nothing");
    await refundedSoFar(250);
    t.same(await state(), { balance: 50, status: "succeeded", refunded_cents: 250 }, "half back: half the credits taken");
    await refundedSoFar(100);
    t.same(await state(), { balance: 50, status: "succeeded", refunded_cents: 250 }, "an older, smaller total arriving late changes nothing");
    await refundedSoFar(500);
    t.same(await state(), { balance: 0, status: "refunded", refunded_cents: 500 }, "all back: every credit taken, the payment refunded");
    const ledger = await creditState(app.pool, user.id);
    t.equal(ledger.sum, ledger.balance, "the ledger still sums to the balance");
  });

  await t.test("monthly credits a refunded plan or patron period brought are taken back; those owed to what stays are kept", async (t) => {
    const plans = (await me.get("/api/plans")).body.data as { id: number; code: string }[];
    const pro = plans.find((p) => p.code === "pro")!;
    const buyer = await buildUserWithToken(app.pool);
    const as = client(app.url, buyer.token);
    const project = (await as.post("/api/projects", { name: "Monthly" })).body.project;
    const plan = await as.post("/api/subscriptions", { project_id: project.id, plan_id: pro.id, payment_method: "cardprocessor" });
    await succeeded(plan.body.transaction);
    t.equal(await awardMonthlyCredits(app.pool, buyer.user.id), true);
    t.equal((await creditState(app.pool, buyer.user.id)).balance, 200, "pro's monthly credits awarded");
    await refunded(plan.body.transaction);
    t.match(await creditState(app.pool, buyer.user.id), { balance: 0, shortfall: 0 }, "taken back with the period");
    t.equal(await monthAward(buyer.user.id), 0, "the month's award keeps what it is still owed: nothing");

    const patron = await buildUserWithToken(app.pool);
    const asPatron = client(app.url, patron.token);
    await grantCredits(app.pool, { userId: patron.user.id, amount: 300, reason: "test", referenceType: null, referenceId: null, idempotencyKey: "monthly-patron" });
    t.equal((await asPatron.post("/api/patron/subscribe", { level: 1 })).status, 201, "level 1 bought with credits");
    const level3 = await asPatron.post("/api/patron/subscribe", { level: 3, payment_method: "cardprocessor" });
    await succeeded(level3.body.transaction);
    await app.pool.query(sql.type(z.object({}))`update patron_memberships set started_at = now() - interval '1 day' where transaction_id = ${level3.body.transaction.id}`);
    const before = (await creditState(app.pool, patron.user.id)).balance;
    t.equal(await awardMonthlyCredits(app.pool, patron.user.id), true);
    const levels = await app.pool.any(sql.type(z.object({ level: z.number(), monthly_credits: z.number() }))`select level, monthly_credits from patron_levels where level in (1, 3) order by level`);
    t.equal((await creditState(app.pool, patron.user.id)).balance, before + levels[1]!.monthly_credits, "level 3's monthly credits awarded");
    await refunded(level3.body.transaction);
    t.equal((await creditState(app.pool, patron.user.id)).balance, before + levels[0]!.monthly_credits, "level 3's share taken back; level 1's, still running, kept");
    const ledger = await creditState(app.pool, patron.user.id);
    t.equal(ledger.sum, ledger.balance, "the ledger still sums to the balance");
  });

  await t.test("a plan payment that succeeds after its project was deleted is refunded at the card processor, and the buyer told", async (t) => {
    const buyer = await buildUserWithToken(app.pool);
    const as = client(app.url, buyer.token);
    const pro = ((await as.get("/api/plans")).body.data as { id: number; code: string; price_cents: number }[]).find((p) => p.code === "pro")!;
    const project = (await as.post("/api/projects", { name: "Gone before paid" })).body.project;
    const started = await as.post("/api/subscriptions", { project_id: project.id, plan_id: pro.id, payment_method: "cardprocessor" });
    t.equal(started.status, 202, started.text);
    t.equal((await as.delete(`/api/projects/${project.id}`)).status, 200, "the project is deleted while the buyer pays");
    await succeeded(started.body.transaction);
    await refundsSettled(app.pool);
    const [refund, ...more] = [...stripe.refunds.values()].filter((r) => r.payment_intent === started.body.transaction.provider_payment_id);
    t.match(refund, { amount: pro.price_cents, metadata: { transaction_id: String(started.body.transaction.id) }, status: "succeeded" }, "the whole payment refunded through the card processor");
    t.equal(more.length, 0, "once");
    t.same(await automaticRefund(app.pool, started.body.transaction.id), {
      status: "refunded", refund_reason: "project_deleted", provider_refund_id: refund!.id, refunded_cents: pro.price_cents, invoices: 0, mails: 1,
    }, "recorded as refunded with its reason, no invoice, the buyer e-mailed");
    const periods = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from subscriptions where transaction_id = ${started.body.transaction.id}`);
    t.equal(periods, 0, "no period for the deleted project");

    await refunded(started.body.transaction);
    t.equal((await automaticRefund(app.pool, started.body.transaction.id)).status, "refunded", "the card processor's own refund webhook changes nothing");
    t.equal((await creditState(app.pool, buyer.user.id)).entries, 0, "no credit moved");
  });

  await t.test("a payment an operator had refunded by hand at the card processor already counts as refunded", async (t) => {
    const buyer = await buildUserWithToken(app.pool);
    const as = client(app.url, buyer.token);
    const pro = ((await as.get("/api/plans")).body.data as { id: number; code: string; price_cents: number }[]).find((p) => p.code === "pro")!;
    const project = (await as.post("/api/projects", { name: "Refunded by hand" })).body.project;
    const started = await as.post("/api/subscriptions", { project_id: project.id, plan_id: pro.id, payment_method: "cardprocessor" });
    t.equal((await as.delete(`/api/projects/${project.id}`)).status, 200);
    const byHand = await fetch(`${stripe.url}/v1/refunds`, {
      method: "POST",
      headers: { authorization: `Bearer ${stripe.secretKey}`, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ payment_intent: started.body.transaction.provider_payment_id }),
    });
    t.equal(byHand.status, 200, "refunded in the card processor's dashboard before the success reached us");
    await succeeded(started.body.transaction);
    await refundsSettled(app.pool);
    t.equal([...stripe.refunds.values()].filter((r) => r.payment_intent === started.body.transaction.provider_payment_id).length, 1, "not refunded twice");
    t.match(await automaticRefund(app.pool, started.body.transaction.id), { status: "refunded", refund_reason: "project_deleted", provider_refund_id: null, refunded_cents: pro.price_cents });
  });

  await t.test("two card payments for one plan started together: the second success is refunded, not stacked on the first", async (t) => {
    const buyer = await buildUserWithToken(app.pool);
    const as = client(app.url, buyer.token);
    const pro = ((await as.get("/api/plans")).body.data as { id: number; code: string }[]).find((p) => p.code === "pro")!;
    const project = (await as.post("/api/projects", { name: "Double click" })).body.project;
    const both = await Promise.all([0, 1].map(() => as.post("/api/subscriptions", { project_id: project.id, plan_id: pro.id, payment_method: "cardprocessor" })));
    t.same(both.map((r) => r.status), [202, 202], "both pass the subscription_active check: nothing runs yet");
    await Promise.all(both.map((r) => succeeded(r.body.transaction)));
    await refundsSettled(app.pool);
    const ids = both.map((r) => r.body.transaction.id as number);
    const periods = await app.pool.anyFirst(sql.type(z.object({ transaction_id: z.number().nullable() }))`
      select transaction_id from subscriptions where project_id = ${project.id} and plan_id = ${pro.id}`);
    t.equal(periods.length, 1, "one pro period");
    const kept = periods[0]!;
    const other = ids.find((id) => id !== kept)!;
    t.ok(ids.includes(kept), "bought by one of the two payments");
    t.match(await automaticRefund(app.pool, kept), { status: "succeeded", refund_reason: null, invoices: 1 });
    t.match(await automaticRefund(app.pool, other), { status: "refunded", refund_reason: "subscription_active", invoices: 0, mails: 1 }, "the other is refunded, the buyer e-mailed once");
    const intentOf = (id: number) => both.find((r) => r.body.transaction.id === id)!.body.transaction.provider_payment_id as string;
    t.same([...stripe.refunds.values()].filter((r) => [intentOf(kept), intentOf(other)].includes(r.payment_intent)).map((r) => [r.payment_intent, r.reason]), [[intentOf(other), "duplicate"]]);
    t.equal((await as.get("/api/billing/subscription")).body.plan.code, "pro", "the project is on pro");
  });

  await t.test("a partial refund that arrives before the success takes back only its share once the payment succeeds", async (t) => {
    const bought = await me.post("/api/credits/purchase", { package_id: 1, payment_method: "cardprocessor" });
    const { id, provider_payment_id: intentId } = bought.body.transaction as { id: number; provider_payment_id: string };
    const start = (await creditState(app.pool, user.id)).balance;
    const state = async () => ({
      balance: (await creditState(app.pool, user.id)).balance - start,
      ...(await app.pool.one(sql.type(z.object({ status: z.string(), refunded_cents: z.number() }))`select status, refunded_cents from credit_transactions where id = ${id}`)),
    });
    await deliver(stripe.event("charge.refunded", { ...stripe.refundedCharge(intentId), amount_refunded: 100, refunded: false }));
    t.same(await state(), { balance: 0, status: "pending", refunded_cents: 100 }, "1 euro of 5 back before the success: recorded, the payment still waits");
    await succeeded(bought.body.transaction);
    t.same(await state(), { balance: 80, status: "succeeded", refunded_cents: 100 }, "the success grants the package less the refunded share");
    await deliver(stripe.event("charge.refunded", stripe.refundedCharge(intentId)));
    t.same(await state(), { balance: 0, status: "refunded", refunded_cents: 500 }, "the rest refunded later takes the rest");
    const ledger = await creditState(app.pool, user.id);
    t.equal(ledger.sum, ledger.balance, "the ledger still sums to the balance");
  });

  await t.test("monthly credits: a partial refund takes back the same share of what the period brought; a period that had ended gives its awards back too", async (t) => {
    const plans = (await me.get("/api/plans")).body.data as { id: number; code: string; price_cents: number }[];
    const pro = plans.find((p) => p.code === "pro")!;
    const buyer = await buildUserWithToken(app.pool);
    const as = client(app.url, buyer.token);
    const project = (await as.post("/api/projects", { name: "Partly refunded" })).body.project;
    const plan = await as.post("/api/subscriptions", { project_id: project.id, plan_id: pro.id, payment_method: "cardprocessor" });
    await succeeded(plan.body.transaction);
    t.equal(await awardMonthlyCredits(app.pool, buyer.user.id), true);
    t.equal((await creditState(app.pool, buyer.user.id)).balance, 200, "pro's monthly credits awarded");
    const refundedSoFar = (cents: number) =>
      deliver(stripe.event("charge.refunded", { ...stripe.refundedCharge(plan.body.transaction.provider_payment_id), amount_refunded: cents, refunded: cents === pro.price_cents }));
    const quarter = Math.floor(pro.price_cents / 4);
    await refundedSoFar(quarter);
    const afterQuarter = 200 - Math.floor((200 * quarter) / pro.price_cents);
    t.equal((await creditState(app.pool, buyer.user.id)).balance, afterQuarter, "a quarter of the price back: a quarter of the award taken");
    t.equal((await as.get("/api/billing/subscription")).body.plan.code, "pro", "the period stays");
    await refundedSoFar(quarter);
    t.equal((await creditState(app.pool, buyer.user.id)).balance, afterQuarter, "the same total again takes nothing more");
    await refundedSoFar(pro.price_cents);
    t.match(await creditState(app.pool, buyer.user.id), { balance: 0, shortfall: 0 }, "all back: the whole award taken, no more");
    t.equal(await monthAward(buyer.user.id), 0);
    let ledger = await creditState(app.pool, buyer.user.id);
    t.equal(ledger.sum, ledger.balance, "the ledger still sums to the balance");

    const patron = await buildUserWithToken(app.pool);
    const asPatron = client(app.url, patron.token);
    const level3 = await asPatron.post("/api/patron/subscribe", { level: 3, payment_method: "cardprocessor" });
    await succeeded(level3.body.transaction);
    t.equal(await awardMonthlyCredits(app.pool, patron.user.id), true);
    const awarded = (await creditState(app.pool, patron.user.id)).balance;
    t.ok(awarded > 0, "level 3's monthly credits awarded");
    // The period and its award move 31 days into the past: the period has ended when the refund comes.
    await app.pool.query(sql.type(z.object({}))`
      update patron_memberships set started_at = started_at - interval '31 days', expires_at = expires_at - interval '31 days' where transaction_id = ${level3.body.transaction.id}`);
    await app.pool.query(sql.type(z.object({}))`update credit_monthly_awards set created_at = created_at - interval '31 days' where user_id = ${patron.user.id}`);
    t.equal(await currentPatronPeriod(app.pool, patron.user.id), null, "the period is over");
    await refunded(level3.body.transaction);
    t.match(await creditState(app.pool, patron.user.id), { balance: 0, shortfall: 0 }, "its award goes back with the money");
    ledger = await creditState(app.pool, patron.user.id);
    t.equal(ledger.sum, ledger.balance, "the ledger still sums to the balance");
  });

  await t.test("a refund that arrives before the success credits nothing", async (t) => {
    const bought = await me.post("/api/credits/purchase", { package_id: 1, payment_method: "cardprocessor" });
    const before = await creditState(app.pool, user.id);
    await refunded(bought.body.transaction);
    await succeeded(bought.body.transaction);
    t.equal(await transactionStatus(bought.body.transaction.id), "refunded", "the payment ends refunded");
    t.same(await creditState(app.pool, user.id), before, "no credits for a refunded payment");
  });
});
