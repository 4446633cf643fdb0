/**
 * An administrator refunds euro store sales: `POST /admin/store/purchases/{id}/refund` queues
 * the refund at the card processor or wallet provider (the stand-ins), and only once the
 * provider has refunded does the buyer lose access and the seller the pending earning, with a
 * credit note for the buyer. Asked twice, it refunds once; the provider's own refund webhook
 * then changes nothing. A sale this service cannot refund still answers 409 `refund_at_provider`.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildUserWithToken } from "../../support/factories.ts";
import { request } from "../../support/http.ts";
import { eventsSettled, refundsSettled } from "../../support/payments.ts";
import { startPaypalStandIn } from "../../support/peers/paypalPeer.ts";
import { startStripeStandIn } from "../../support/peers/stripePeer.ts";
import { buildSeller, buildStoreTemplate } from "../../support/storeFactories.ts";
import { buildTemplate } from "../../support/templateFactories.ts";
import { until } from "../../support/wait.ts";

t.test("administrators' refunds of euro sales", async (t) => {
  const stripe = await startStripeStandIn();
  const paypal = await startPaypalStandIn();
  t.teardown(() => Promise.all([stripe.close(), paypal.close()]));
  const app = await startTestApp(t, { worker: true, env: { ...stripe.env, ...paypal.env, STORE_SELLER_SHARE_PERCENT: "70" } });
  const seller = await buildSeller(app);
  const admin = await buildUserWithToken(app.pool, { roles: ["user", "admin"] });
  const template = await buildTemplate(app.pool, { ownerId: seller.user.id }, seller.user.id);
  let kits = 0;

  const deliverCard = async (event: object) => {
    const { body, signature } = stripe.signed(event);
    const res = await request(app.url, "POST", "/api/cardprocessor/webhook", { raw: true, body, headers: { "content-type": "application/json", "stripe-signature": signature } });
    t.equal(res.status, 200, res.text);
    await eventsSettled(app.pool);
  };
  const deliverWallet = async (event: object) => {
    const { body, headers } = paypal.signed(event);
    const res = await request(app.url, "POST", "/api/walletprovider/webhook", { raw: true, body, headers: { "content-type": "application/json", ...headers } });
    t.equal(res.status, 200, res.text);
    await eventsSettled(app.pool);
  };
  /** A buyer who bought a new 19.99 EUR kit through `method`; the purchase and its transaction. */
  const sold = async (method: "cardprocessor" | "walletprovider") => {
    const buyer = await buildUserWithToken(app.pool);
    const storeId = await buildStoreTemplate(app.pool, seller.user.id, [template], { name: `Kit ${++kits}`, price_type: "euros", price_euro_cents: 1999 });
    const started = await request(app.url, "POST", "/api/store/purchase", { token: buyer.token, body: { template_id: storeId, payment_method: method } });
    t.equal(started.status, 202, started.text);
    const transaction = started.body.transaction as { id: number; provider_payment_id: string | null; provider_order_id: string | null };
    if (method === "cardprocessor") {
      await deliverCard(stripe.event("payment_intent.succeeded", { ...stripe.intents.get(transaction.provider_payment_id!)!, status: "succeeded" }));
    } else {
      const order = paypal.orders.get(transaction.provider_order_id!)!;
      await deliverWallet(paypal.event("CHECKOUT.ORDER.APPROVED", { id: order.id, status: "APPROVED", purchase_units: [{ custom_id: order.customId }] }));
      await deliverWallet(paypal.event("PAYMENT.CAPTURE.COMPLETED", paypal.captureResource(order.id)));
    }
    const purchaseId = (await request(app.url, "GET", "/api/store/purchases", { token: buyer.token })).body.data[0].id as number;
    return { buyer, storeId, transaction, purchaseId };
  };
  const sale = (purchaseId: number) =>
    app.pool.one(sql.type(z.object({ purchase: z.string(), earning: z.string().nullable(), payment: z.string(), refunded_cents: z.number(), credit_notes: z.number(), receipts: z.number() }))`
      select p.status as purchase, (select status from seller_earnings where purchase_id = p.id) as earning, c.status as payment, c.refunded_cents,
        (select count(*)::int from credit_notes where transaction_id = c.id) as credit_notes,
        (select count(*)::int from jobs j where j.kind = 'emails__send' and j.payload->>'kind' = 'purchase_refunded' and j.user_id = c.user_id) as receipts
      from store_purchases p join credit_transactions c on c.id = p.transaction_id where p.id = ${purchaseId}`);
  const refund = (purchaseId: number, token = admin.token) => request(app.url, "POST", `/api/admin/store/purchases/${purchaseId}/refund`, { token });
  const download = (buyer: { token: string }, storeId: number) => request(app.url, "GET", `/api/store/templates/${storeId}/download`, { token: buyer.token });
  const unpaid = { purchase: "completed", earning: "pending", payment: "succeeded", refunded_cents: 0, credit_notes: 0, receipts: 0 };
  const refunded = { purchase: "refunded", earning: "reversed", payment: "refunded", refunded_cents: 1999, credit_notes: 1, receipts: 1 };

  await t.test("a card sale: refunded at the card processor once, then access and earning go, with a credit note", async (t) => {
    const { buyer, storeId, transaction, purchaseId } = await sold("cardprocessor");
    t.equal((await refund(purchaseId, buyer.token)).status, 403, "not for users");
    t.same(await sale(purchaseId), unpaid);
    const asked = await Promise.all([refund(purchaseId), refund(purchaseId)]);
    t.same(asked.map((r) => r.status), [202, 202], asked.map((r) => r.text).join(" "));
    t.match(asked[0].body, { refunded: false, refund_requested: true });
    await refundsSettled(app.pool);
    const atProvider = [...stripe.refunds.values()].filter((r) => r.payment_intent === transaction.provider_payment_id);
    t.same(atProvider.map((r) => [r.amount, r.metadata.transaction_id]), [[1999, String(transaction.id)]], "the whole payment refunded once at the card processor");
    t.same(await sale(purchaseId), refunded, "the purchase refunded, the seller's pending earning reversed, one credit note, the buyer's receipt queued once");
    const receipt = await app.pool.oneFirst(sql.type(z.object({ params: z.record(z.string(), z.string()) }))`
      select payload->'params' as params from jobs where kind = 'emails__send' and payload->>'kind' = 'purchase_refunded' and user_id = ${buyer.user.id}`);
    t.match(receipt, { amount: "19.99 EUR", credit_note: /^CN-\d{4}-\d{6}$/, item: /^Kit \d+$/ });
    t.equal((await download(buyer, storeId)).status, 403, "the buyer's access is gone");
    const documents = (await request(app.url, "GET", "/api/billing/invoices", { token: buyer.token })).body.data as { kind: string; total_cents: number }[];
    t.same(documents.map((d) => [d.kind, d.total_cents]), [["credit_note", 1999], ["invoice", 1999]], "the buyer reads the credit note beside the invoice");

    await deliverCard(stripe.event("charge.refunded", stripe.refundedCharge(transaction.provider_payment_id!)));
    t.same(await sale(purchaseId), refunded, "the card processor's own refund webhook changes nothing");
    t.match(await refund(purchaseId), { status: 200, body: { refunded: false } }, "asked again: refunded before");
  });

  await t.test("a wallet sale: refunded at the wallet provider once", async (t) => {
    const { buyer, storeId, purchaseId } = await sold("walletprovider");
    const before = paypal.refunds.length;
    t.equal((await refund(purchaseId)).status, 202);
    await refundsSettled(app.pool);
    t.equal(paypal.refunds.length, before + 1, "one refund of the capture");
    t.same(await sale(purchaseId), refunded);
    t.equal((await download(buyer, storeId)).status, 403);
  });

  await t.test("a sale this service cannot refund at the provider answers 409 refund_at_provider and changes nothing", async (t) => {
    const { buyer, storeId, transaction, purchaseId } = await sold("walletprovider");
    // A sale recorded before the wallet provider's capture id was kept: nothing here names what to refund.
    await app.pool.query(sql.type(z.object({}))`update credit_transactions set provider_capture_id = null where id = ${transaction.id}`);
    t.match(await refund(purchaseId), { status: 409, body: { code: "refund_at_provider" } });
    t.same(await sale(purchaseId), unpaid);
    t.equal((await download(buyer, storeId)).status, 200);
    t.equal((await refund(999_999)).status, 404);
  });
  await t.test("the buyer keeps access until the provider has refunded", async (t) => {
    const { buyer, storeId, transaction, purchaseId } = await sold("cardprocessor");
    // The card processor refuses the refund (here: it no longer knows the PaymentIntent); the job retries later.
    stripe.intents.delete(transaction.provider_payment_id!);
    t.equal((await refund(purchaseId)).status, 202);
    // Last subtest: its job keeps retrying, so no later one can wait for the refund jobs to settle.
    const job = () =>
      app.pool.maybeOneFirst(sql.type(z.object({ failed: z.boolean() }))`
        select error is not null as failed from jobs where kind = 'payments__refund' and payload->>'transaction_id' = ${String(transaction.id)}`);
    await until(async () => (await job()) === true, { message: "the refund job to fail at the provider" });
    t.same(await sale(purchaseId), unpaid, "nothing taken back");
    t.equal((await download(buyer, storeId)).status, 200, "the buyer still downloads");
  });

});
