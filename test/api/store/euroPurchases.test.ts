/**
 * Euro purchases of store templates through the Stripe stand-in, with webhooks signed by the
 * real `stripe` signing helper: the payment starts pending, a redelivered success records the
 * purchase and the seller's pending earning once, the provider's refund reverses them (an
 * administrator's refund: adminEuroRefunds.test.ts), and a second payment that succeeds for
 * a template already bought is refunded by the service.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildUserWithToken } from "../../support/factories.ts";
import { request } from "../../support/http.ts";
import { automaticRefund, eventsSettled, refundsSettled } from "../../support/payments.ts";
import { startStripeStandIn } from "../../support/peers/stripePeer.ts";
import { buildSeller, buildStoreTemplate } from "../../support/storeFactories.ts";
import { buildTemplate } from "../../support/templateFactories.ts";

t.test("euro purchases by card", async (t) => {
  const stripe = await startStripeStandIn();
  t.teardown(() => stripe.close());
  const app = await startTestApp(t, {
    worker: true,
    env: { ...stripe.env, STORE_SELLER_SHARE_PERCENT: "70" },
  });
  const seller = await buildSeller(app);
  const buyer = await buildUserWithToken(app.pool);
  const template = await buildTemplate(app.pool, { ownerId: seller.user.id }, seller.user.id);
  const storeId = await buildStoreTemplate(app.pool, seller.user.id, [template], { price_type: "euros", price_euro_cents: 1999 });
  const deliver = (event: object) => {
    const { body, signature } = stripe.signed(event);
    return request(app.url, "POST", "/api/cardprocessor/webhook", { raw: true, body, headers: { "content-type": "application/json", "stripe-signature": signature } });
  };
  const state = () =>
    app.pool.one(sql.type(z.object({ purchases: z.number(), earning: z.number().nullable(), earning_status: z.string().nullable(), sales: z.number() }))`
      select (select count(*)::int from store_purchases where status = 'completed') as purchases,
        (select amount_cents from seller_earnings limit 1) as earning, (select status from seller_earnings limit 1) as earning_status,
        (select sales_count from store_templates where id = ${storeId}) as sales`);

  const started = await request(app.url, "POST", "/api/store/purchase", { token: buyer.token, body: { template_id: storeId, payment_method: "cardprocessor" } });
  t.equal(started.status, 202, started.text);
  t.match(started.body.transaction, { kind: "store_template", status: "pending", amount_cents: 1999, currency: "EUR", credits: 0 });
  const intent = stripe.intents.get(started.body.transaction.provider_payment_id)!;
  t.equal(intent.amount, 1999);
  t.equal(started.body.transaction.client_secret, intent.client_secret);
  t.match(await request(app.url, "POST", "/api/store/purchase", { token: buyer.token, body: { template_id: storeId, payment_method: "cardprocessor" } }), {
    status: 409,
    body: { code: "payment_pending" },
  });
  t.equal((await request(app.url, "GET", `/api/store/templates/${storeId}/download`, { token: buyer.token })).status, 403, "not bought before the webhook");

  const succeeded = stripe.event("payment_intent.succeeded", { ...intent, status: "succeeded" });
  const deliveries = await Promise.all([deliver(succeeded), deliver(succeeded), deliver(succeeded)]);
  t.same(deliveries.map((r) => r.status), [200, 200, 200]);
  await eventsSettled(app.pool);
  t.same(await state(), { purchases: 1, earning: 1399, earning_status: "pending", sales: 1 }, "one purchase, 70 % of 19.99 EUR pending");
  const listed = await request(app.url, "GET", "/api/store/purchases", { token: buyer.token });
  t.match(listed.body.data[0], { payment_type: "euros", price_euros: 19.99, template: { id: storeId } });
  t.equal((await request(app.url, "GET", `/api/store/templates/${storeId}/download`, { token: buyer.token })).status, 200);
  t.match(await request(app.url, "POST", "/api/store/purchase", { token: buyer.token, body: { template_id: storeId, payment_method: "cardprocessor" } }), {
    status: 409,
    body: { code: "already_purchased" },
  });

  t.equal((await deliver(stripe.event("charge.refunded", stripe.refundedCharge(intent.id)))).status, 200);
  await eventsSettled(app.pool);
  t.same(await state(), { purchases: 0, earning: 1399, earning_status: "reversed", sales: 0 }, "the refund reverses the pending earning");
  t.equal((await request(app.url, "GET", `/api/store/templates/${storeId}/download`, { token: buyer.token })).status, 403);

  // Refunded, the template can be bought again, and the second payment buys it (it was taken and delivered nothing).
  t.match((await request(app.url, "GET", `/api/store/templates/${storeId}`, { token: buyer.token })).body.data, { is_purchased: false, can_purchase: true });
  const again = await request(app.url, "POST", "/api/store/purchase", { token: buyer.token, body: { template_id: storeId, payment_method: "cardprocessor" } });
  t.equal(again.status, 202, again.text);
  const second = stripe.intents.get(again.body.transaction.provider_payment_id)!;
  t.not(second.id, intent.id, "a new payment");
  t.equal((await deliver(stripe.event("payment_intent.succeeded", { ...second, status: "succeeded" }))).status, 200);
  await eventsSettled(app.pool);
  t.equal((await state()).purchases, 1, "the second payment is recorded as a purchase");
  t.equal((await state()).sales, 1);
  t.equal((await request(app.url, "GET", `/api/store/templates/${storeId}/download`, { token: buyer.token })).status, 200, "and delivers");
  const earnings = await app.pool.anyFirst(sql.type(z.object({ status: z.string() }))`select status from seller_earnings order by id`);
  t.same(earnings, ["reversed", "pending"]);

  // The seller deletes a template while a payment for it runs: it is withdrawn, not deleted, and the payment still buys it.
  const other = await buildStoreTemplate(app.pool, seller.user.id, [template], { name: "Second kit", price_type: "euros", price_euro_cents: 500 });
  const paying = await request(app.url, "POST", "/api/store/purchase", { token: buyer.token, body: { template_id: other, payment_method: "cardprocessor" } });
  t.equal(paying.status, 202, paying.text);
  const removed = await request(app.url, "DELETE", `/api/store/templates/${other}`, { token: seller.token });
  t.equal(removed.status, 200, removed.text);
  t.equal(removed.body.withdrawn, true, "withdrawn while a payment for it is open");
  const third = stripe.intents.get(paying.body.transaction.provider_payment_id)!;
  t.equal((await deliver(stripe.event("payment_intent.succeeded", { ...third, status: "succeeded" }))).status, 200);
  await eventsSettled(app.pool);
  t.equal((await request(app.url, "GET", `/api/store/templates/${other}/download`, { token: buyer.token })).status, 200, "the paid template is delivered");

  // A payment left pending past the hour that blocks a second start succeeds after the second one bought the template: it is refunded.
  const kit = await buildStoreTemplate(app.pool, seller.user.id, [template], { name: "Third kit", price_type: "euros", price_euro_cents: 700 });
  const buy = () => request(app.url, "POST", "/api/store/purchase", { token: buyer.token, body: { template_id: kit, payment_method: "cardprocessor" } });
  const abandoned = await buy();
  t.equal(abandoned.status, 202, abandoned.text);
  await app.pool.query(sql.type(z.object({}))`update credit_transactions set created_at = now() - interval '2 hours' where id = ${abandoned.body.transaction.id}`);
  const retried = await buy();
  t.equal(retried.status, 202, `an hour later the buyer may start again: ${retried.text}`);
  for (const started of [retried, abandoned]) {
    const paid = stripe.intents.get(started.body.transaction.provider_payment_id)!;
    t.equal((await deliver(stripe.event("payment_intent.succeeded", { ...paid, status: "succeeded" }))).status, 200);
    await eventsSettled(app.pool);
  }
  await refundsSettled(app.pool);
  const sales = await app.pool.one(sql.type(z.object({ purchases: z.number(), earnings: z.number() }))`
    select count(*)::int as purchases, (select count(*)::int from seller_earnings e where e.purchase_id = any(array_agg(p.id))) as earnings
    from store_purchases p where p.store_template_id = ${kit}`);
  t.same(sales, { purchases: 1, earnings: 1 }, "one purchase, one earning");
  t.match(await automaticRefund(app.pool, retried.body.transaction.id), { status: "succeeded", refund_reason: null, invoices: 1 });
  t.match(await automaticRefund(app.pool, abandoned.body.transaction.id), { status: "refunded", refund_reason: "already_purchased", refunded_cents: 700, invoices: 0, mails: 1 }, "the late payment is refunded, the buyer e-mailed");
  const refunds = [...stripe.refunds.values()].map((r) => [r.payment_intent, r.amount, r.reason]);
  t.same(refunds, [[abandoned.body.transaction.provider_payment_id, 700, "duplicate"]], "through the card processor, the whole amount");
});
