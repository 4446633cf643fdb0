/**
 * Euro purchases of store templates through the wallet provider (the PayPal stand-in), end to
 * end: the order carries the transaction, an approval captures it once, the completed capture
 * records the purchase and the seller's pending earning once, the buyer downloads and installs
 * exactly the bought version, and a refund reverses the earning and the access.
 */
import t from "tap";
import { z } from "zod";
import { extractToMemory } from "../../../shared/archive/zipReader.ts";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { request } from "../../support/http.ts";
import { eventsSettled } from "../../support/payments.ts";
import { startPaypalStandIn } from "../../support/peers/paypalPeer.ts";
import { buildSeller, buildStoreTemplate } from "../../support/storeFactories.ts";
import { buildTemplate } from "../../support/templateFactories.ts";

t.test("euro purchases through the wallet provider", async (t) => {
  const paypal = await startPaypalStandIn();
  t.teardown(() => paypal.close());
  const app = await startTestApp(t, {
    worker: true,
    env: { ...paypal.env, STORE_SELLER_SHARE_PERCENT: "70" },
  });
  const seller = await buildSeller(app);
  const buyer = await buildUserWithToken(app.pool);
  const template = await buildTemplate(app.pool, { ownerId: seller.user.id }, seller.user.id, {
    name: "Wallet kit",
    files: [{ file_name: "hello.txt", content: "Hello {:name:}\n" }],
  });
  const storeId = await buildStoreTemplate(app.pool, seller.user.id, [template], { name: "Wallet kit", price_type: "euros", price_euro_cents: 1999 });
  const deliver = (event: object, options?: { webhookId?: string }) => {
    const { body, headers } = paypal.signed(event, options);
    return request(app.url, "POST", "/api/walletprovider/webhook", { raw: true, body, headers: { "content-type": "application/json", ...headers } });
  };
  const state = () =>
    app.pool.one(sql.type(z.object({ purchases: z.number(), earning: z.number().nullable(), earning_status: z.string().nullable(), sales: z.number() }))`
      select (select count(*)::int from store_purchases where status = 'completed') as purchases,
        (select amount_cents from seller_earnings limit 1) as earning, (select status from seller_earnings limit 1) as earning_status,
        (select sales_count from store_templates where id = ${storeId}) as sales`);
  const download = () => request(app.url, "GET", `/api/store/templates/${storeId}/download`, { token: buyer.token });
  const nothingYet = { purchases: 0, earning: null, earning_status: null, sales: 0 };

  const started = await request(app.url, "POST", "/api/store/purchase", { token: buyer.token, body: { template_id: storeId, payment_method: "walletprovider" } });
  t.equal(started.status, 202, started.text);
  const transaction = started.body.transaction;
  t.match(transaction, { kind: "store_template", status: "pending", amount_cents: 1999, currency: "EUR", credits: 0, payment_method: "walletprovider" });
  const order = paypal.orders.get(transaction.provider_order_id)!;
  t.ok(order, "the order exists at the wallet provider");
  t.equal(order.customId, String(transaction.id), "carrying the transaction id");
  t.same(order.amount, { currency_code: "EUR", value: "19.99" });
  t.match(transaction.approval_url, /checkoutnow\?token=/, "the buyer is sent to approve it");
  t.match(await request(app.url, "POST", "/api/store/purchase", { token: buyer.token, body: { template_id: storeId, payment_method: "walletprovider" } }), {
    status: 409,
    body: { code: "payment_pending" },
  });
  t.equal((await download()).status, 403, "nothing to download before the payment completes");

  await t.test("an event signed for another webhook changes nothing", async (t) => {
    const forged = paypal.event("PAYMENT.CAPTURE.COMPLETED", { id: "FORGED", status: "COMPLETED", custom_id: order.customId });
    t.equal((await deliver(forged, { webhookId: "WH-SOMEONE-ELSE" })).status, 400);
    t.same(await state(), nothingYet);
  });

  await t.test("approval captures once and buys nothing yet", async (t) => {
    const approved = paypal.event("CHECKOUT.ORDER.APPROVED", { id: order.id, status: "APPROVED", purchase_units: [{ custom_id: order.customId }] });
    t.same((await Promise.all([deliver(approved), deliver(approved), deliver(approved)])).map((r) => r.status), [200, 200, 200]);
    await eventsSettled(app.pool);
    t.same(paypal.captures, [order.id], "one capture");
    t.same(await state(), nothingYet, "the purchase waits for the completed capture");
  });

  await t.test("the completed capture records the purchase and the seller's pending earning once", async (t) => {
    const completed = paypal.event("PAYMENT.CAPTURE.COMPLETED", paypal.captureResource(order.id));
    t.same((await Promise.all([deliver(completed), deliver(completed), deliver(completed)])).map((r) => r.status), [200, 200, 200]);
    await eventsSettled(app.pool);
    t.same(await state(), { purchases: 1, earning: 1399, earning_status: "pending", sales: 1 }, "one purchase, 70 % of 19.99 EUR pending");
    const paid = await app.pool.one(sql.type(z.object({ status: z.string(), capture: z.string().nullable() }))`
      select status, provider_capture_id as capture from credit_transactions where id = ${transaction.id as number}`);
    t.same(paid, { status: "succeeded", capture: order.captureId });
    const listed = await request(app.url, "GET", "/api/store/purchases", { token: buyer.token });
    t.match(listed.body.data, [{ payment_type: "euros", price_euros: 19.99, status: "completed", template: { id: storeId, version: 1 } }]);
    const shown = await request(app.url, "GET", `/api/store/templates/${storeId}`, { token: buyer.token });
    t.match(shown.body.data, { is_purchased: true, is_own: false });
    t.match(await request(app.url, "POST", "/api/store/purchase", { token: buyer.token, body: { template_id: storeId, payment_method: "walletprovider" } }), {
      status: 409,
      body: { code: "already_purchased" },
    });
  });

  await t.test("the buyer downloads and installs the bought version", async (t) => {
    const res = await fetch(`${app.url}/api/store/templates/${storeId}/download`, { headers: { authorization: `Bearer ${buyer.token}` } });
    t.equal(res.status, 200);
    const entries = await extractToMemory(Buffer.from(await res.arrayBuffer()));
    t.equal(entries.find((e) => e.path === "01-Wallet-kit/files/hello.txt")?.content.toString("utf8"), "Hello {:name:}\n", entries.map((e) => e.path).join(", "));
    const project = await buildProject(app.pool, buyer.user.id);
    const installed = await request(app.url, "POST", `/api/store/templates/${storeId}/install`, { token: buyer.token, body: { project_id: project } });
    t.equal(installed.status, 201, installed.text);
    t.same(installed.body.templates.map((tpl: { name: string; project_id: number }) => [tpl.name, tpl.project_id]), [["Wallet kit", project]]);
  });

  await t.test("a refund reverses the pending earning and the access", async (t) => {
    const refunded = paypal.event("PAYMENT.CAPTURE.REFUNDED", { id: "REFUND-WALLET", status: "COMPLETED", custom_id: order.customId });
    t.equal((await deliver(refunded)).status, 200);
    await eventsSettled(app.pool);
    t.same(await state(), { purchases: 0, earning: 1399, earning_status: "reversed", sales: 0 });
    t.equal((await download()).status, 403);
  });
});
