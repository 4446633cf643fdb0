import t from "tap";
import { z } from "zod";
import { spendCredits } from "../../../shared/credits/ledger.ts";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildUserWithToken } from "../../support/factories.ts";
import { client, request } from "../../support/http.ts";
import { creditState, eventsSettled, paymentCounts } from "../../support/payments.ts";
import { startStripeStandIn } from "../../support/peers/stripePeer.ts";

t.test("card payments through the Stripe stand-in, with signed webhooks", async (t) => {
  const stripe = await startStripeStandIn();
  t.teardown(() => stripe.close());
  const app = await startTestApp(t, {
    worker: true,
    env: stripe.env,
  });
  const { user, token } = await buildUserWithToken(app.pool);
  const me = client(app.url, token);
  const packages = (await request(app.url, "GET", "/api/credit-packages")).body.data as { id: number; credits: number; price_cents: number }[];
  t.ok(packages.length >= 3, "seeded packages are listed publicly");
  const pack = packages[0]!;
  const deliver = (event: object, options?: { secret?: string; timestamp?: number; tamper?: boolean }) => {
    const { body, signature } = stripe.signed(event, options);
    return request(app.url, "POST", "/api/cardprocessor/webhook", {
      raw: true,
      body: options?.tamper ? body.replace(/"amount":\d+/, '"amount":1') : body,
      headers: { "content-type": "application/json", "stripe-signature": signature },
    });
  };
  const transactionStatus = (id: number) =>
    app.pool.one(sql.type(z.object({ status: z.string(), refund_shortfall: z.number() }))`select status, refund_shortfall from credit_transactions where id = ${id}`);

  const bought = await me.post("/api/credits/purchase", { package_id: pack.id, payment_method: "cardprocessor" });
  t.equal(bought.status, 201, bought.text);
  const transaction = bought.body.transaction;
  t.match(transaction, { status: "pending", credits: pack.credits, amount_cents: pack.price_cents, payment_method: "cardprocessor" });
  const intent = stripe.intents.get(transaction.provider_payment_id)!;
  t.ok(intent, "the PaymentIntent was created at the card processor");
  t.equal(transaction.client_secret, intent.client_secret, "the answer carries its client secret");
  t.same(intent.metadata, { transaction_id: String(transaction.id) }, "the transaction id travels in its metadata");
  t.equal(intent.amount, pack.price_cents);

  await t.test("forged, wrongly keyed, stale or missing signatures change nothing", async (t) => {
    const before = await paymentCounts(app.pool);
    const event = stripe.event("payment_intent.succeeded", { ...intent, status: "succeeded" });
    const forged = await deliver(event, { tamper: true });
    t.equal(forged.status, 400, "body changed after signing");
    t.equal(forged.body.code, "invalid_signature");
    t.equal((await deliver(event, { secret: "whsec_not_the_secret_at_all" })).status, 400, "signed with another secret");
    t.equal((await deliver(event, { timestamp: Math.floor(Date.now() / 1000) - 3600 })).status, 400, "an hour-old timestamp");
    const missing = await request(app.url, "POST", "/api/cardprocessor/webhook", { body: event });
    t.equal(missing.status, 400, "no signature header");
    t.same(await paymentCounts(app.pool), before, "no event, transaction, ledger entry or job written");
    t.equal((await creditState(app.pool, user.id)).balance, 0);
  });

  await t.test("events about another integration's payment on the same account change nothing, even when its metadata names our transaction", async (t) => {
    const before = await paymentCounts(app.pool);
    const foreign = { ...intent, id: "pi_of_another_shop", client_secret: "pi_of_another_shop_secret", amount: 99, status: "succeeded" };
    t.equal((await deliver(stripe.event("payment_intent.succeeded", foreign))).status, 200, "recorded");
    t.equal((await deliver(stripe.event("charge.refunded", { id: "ch_of_another_shop", object: "charge", amount: 99, amount_refunded: 99, refunded: true, payment_intent: foreign.id, metadata: intent.metadata }))).status, 200);
    await eventsSettled(app.pool);
    t.equal((await transactionStatus(transaction.id)).status, "pending", "our transaction is still waiting for its own payment");
    t.same(await creditState(app.pool, user.id), { balance: 0, shortfall: 0, entries: 0, sum: 0 }, "nothing credited");
    t.equal((await paymentCounts(app.pool)).entries, before.entries);
  });

  await t.test("payment_intent.succeeded delivered five times, three at once, credits once", async (t) => {
    const event = stripe.event("payment_intent.succeeded", { ...intent, status: "succeeded" });
    const first = await deliver(event);
    t.equal(first.status, 200, first.text);
    t.same(first.body, { received: true, duplicate: false });
    const concurrent = await Promise.all([deliver(event), deliver(event), deliver(event)]);
    t.same(concurrent.map((r) => r.status), [200, 200, 200], "concurrent redeliveries answer 200");
    t.ok(concurrent.every((r) => r.body.duplicate === true), "and are recognised as duplicates");
    await eventsSettled(app.pool);
    t.equal((await deliver(event)).status, 200, "a late redelivery answers 200");
    await eventsSettled(app.pool);
    const state = await creditState(app.pool, user.id);
    t.same(state, { balance: pack.credits, shortfall: 0, entries: 1, sum: pack.credits }, "one ledger entry for the package");
    t.equal((await transactionStatus(transaction.id)).status, "succeeded");
    const ledger = await me.get("/api/credits");
    t.match(ledger.body.data[0], { amount: pack.credits, reason: "package_purchase", reference_type: "credit_transaction", reference_id: String(transaction.id) });
    const other = stripe.event("payment_intent.succeeded", { ...intent, status: "succeeded" });
    t.equal((await deliver(other)).status, 200, "another event id for the same intent is recorded");
    await eventsSettled(app.pool);
    t.equal((await creditState(app.pool, user.id)).entries, 1, "but credits nothing more");
  });

  await t.test("a refund after the credits were spent takes what is left and records the shortfall", async (t) => {
    const spent = pack.credits - 30;
    await spendCredits(app.pool, { userId: user.id, amount: spent, reason: "store_purchase", referenceType: null, referenceId: null, idempotencyKey: "spend-before-refund" });
    const refund = stripe.event("charge.refunded", stripe.refundedCharge(intent.id));
    t.equal((await deliver(refund)).status, 200);
    t.equal((await deliver(refund)).status, 200, "delivered twice");
    await eventsSettled(app.pool);
    t.same(await creditState(app.pool, user.id), { balance: 0, shortfall: spent, entries: 3, sum: 0 }, "30 taken back, the rest is shortfall");
    t.same(await transactionStatus(transaction.id), { status: "refunded", refund_shortfall: spent });
    const spend = await spendCredits(app.pool, { userId: user.id, amount: 1, reason: "x", referenceType: null, referenceId: null, idempotencyKey: "after-refund" }).catch((e: unknown) => e);
    t.match(spend, { status: 402, code: "insufficient_credits" }, "spending is blocked until the shortfall is covered");
  });

  await t.test("payment_intent.payment_failed fails the transaction; unknown types are accepted and ignored", async (t) => {
    const second = await me.post("/api/credits/purchase", { package_id: pack.id, payment_method: "cardprocessor" });
    const failedIntent = stripe.intents.get(second.body.transaction.provider_payment_id)!;
    const event = stripe.event("payment_intent.payment_failed", { ...failedIntent, status: "requires_payment_method", last_payment_error: { message: "Your card was declined." } });
    t.equal((await deliver(event)).status, 200);
    t.equal((await deliver(stripe.event("customer.created", { id: "cus_1", object: "customer" }))).status, 200, "unknown type: 200");
    const balance = { object: "balance", available: [{ amount: 500, currency: "eur" }], pending: [], livemode: false };
    t.equal((await deliver(stripe.event("balance.available", balance))).status, 200, "a type whose object has no id: 200");
    await eventsSettled(app.pool);
    t.equal((await transactionStatus(second.body.transaction.id)).status, "failed");
    const ignored = await app.pool.anyFirst(sql.type(z.object({ status: z.string() }))`select status from payment_events where event_type in ('customer.created', 'balance.available')`);
    t.same(ignored, ["ignored", "ignored"], "both recorded as ignored, the job did not fail on them");
  });

  await t.test("bad purchase requests", async (t) => {
    t.equal((await request(app.url, "POST", "/api/credits/purchase", { body: { package_id: pack.id, payment_method: "cardprocessor" } })).status, 401);
    t.equal((await me.post("/api/credits/purchase", { package_id: pack.id, payment_method: "cash" })).status, 422);
    t.equal((await me.post("/api/credits/purchase", { package_id: 999999, payment_method: "cardprocessor" })).status, 404);
  });
});

t.test("without provider keys, paying by card or wallet answers 503 and writes nothing", async (t) => {
  const app = await startTestApp(t);
  const { token } = await buildUserWithToken(app.pool);
  const before = await paymentCounts(app.pool);
  for (const method of ["cardprocessor", "walletprovider"]) {
    const res = await client(app.url, token).post("/api/credits/purchase", { package_id: 1, payment_method: method });
    t.equal(res.status, 503, method);
    t.equal(res.body.code, "payment_provider_unavailable");
  }
  t.equal((await request(app.url, "POST", "/api/cardprocessor/webhook", { body: { id: "evt_1" } })).status, 503);
  t.same(await paymentCounts(app.pool), before);
});
