import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildUserWithToken } from "../../support/factories.ts";
import { client, request } from "../../support/http.ts";
import { automaticRefund, creditState, eventsSettled, paymentCounts, refundsSettled } from "../../support/payments.ts";
import { until } from "../../support/wait.ts";
import { startPaypalStandIn } from "../../support/peers/paypalPeer.ts";

t.test("wallet payments through the PayPal stand-in: order, approval, capture, credit, refund", async (t) => {
  const paypal = await startPaypalStandIn();
  t.teardown(() => paypal.close());
  const app = await startTestApp(t, {
    worker: true,
    env: paypal.env,
  });
  const { user, token } = await buildUserWithToken(app.pool);
  const me = client(app.url, token);
  const deliver = (event: object, options?: { webhookId?: string; tamper?: (body: string) => string }) => {
    const { body, headers } = paypal.signed(event, options);
    return request(app.url, "POST", "/api/walletprovider/webhook", {
      raw: true,
      body: options?.tamper ? options.tamper(body) : body,
      headers: { "content-type": "application/json", ...headers },
    });
  };
  const status = (id: number) => app.pool.oneFirst(sql.type(z.object({ status: z.string() }))`select status from credit_transactions where id = ${id}`);

  const bought = await me.post("/api/credits/purchase", { package_id: 2, payment_method: "walletprovider" });
  t.equal(bought.status, 201, bought.text);
  const transaction = bought.body.transaction;
  const order = paypal.orders.get(transaction.provider_order_id)!;
  t.ok(order, "the order exists at the wallet provider");
  t.equal(order.customId, String(transaction.id), "carrying the transaction id");
  t.equal(order.amount.value, (transaction.amount_cents / 100).toFixed(2));
  t.match(transaction.approval_url, /checkoutnow\?token=/, "the answer carries the approval link");

  await t.test("events that do not verify change nothing", async (t) => {
    const before = await paymentCounts(app.pool);
    const approved = paypal.event("CHECKOUT.ORDER.APPROVED", { id: order.id, status: "APPROVED", purchase_units: [{ custom_id: order.customId }] });
    t.equal((await deliver(approved, { webhookId: "WH-SOMEONE-ELSE" })).status, 400, "signed for another webhook");
    t.equal((await deliver(approved, { tamper: (b) => b.replace(order.id, "0000") })).status, 400, "body changed after signing");
    t.equal((await request(app.url, "POST", "/api/walletprovider/webhook", { body: approved })).status, 400, "no transmission headers");
    t.equal((await request(app.url, "POST", "/api/walletprovider/webhook", { raw: true, body: "{not json", headers: { "content-type": "application/json" } })).status, 400, "not JSON");
    t.same(await paymentCounts(app.pool), before);
    t.same(paypal.captures, [], "nothing captured");
  });

  await t.test("events about another integration's orders on the same account change nothing, even when they carry our transaction id", async (t) => {
    const foreignOrder = { id: "FOREIGNORDER1", status: "APPROVED", purchase_units: [{ custom_id: order.customId }] };
    t.equal((await deliver(paypal.event("CHECKOUT.ORDER.APPROVED", foreignOrder))).status, 200, "recorded");
    const foreignCapture = { id: "FOREIGNCAPTURE1", status: "COMPLETED", custom_id: order.customId, supplementary_data: { related_ids: { order_id: foreignOrder.id } } };
    t.equal((await deliver(paypal.event("PAYMENT.CAPTURE.COMPLETED", foreignCapture))).status, 200);
    await eventsSettled(app.pool);
    t.same(paypal.captures, [], "an order that is not ours is not captured");
    t.equal(await status(transaction.id), "pending", "our transaction is still waiting for its own payment");
    t.same(await creditState(app.pool, user.id), { balance: 0, shortfall: 0, entries: 0, sum: 0 }, "nothing credited");
  });

  await t.test("approval captures once; the completed capture credits once", async (t) => {
    const approved = paypal.event("CHECKOUT.ORDER.APPROVED", { id: order.id, status: "APPROVED", purchase_units: [{ custom_id: order.customId }] });
    const answers = await Promise.all([deliver(approved), deliver(approved), deliver(approved)]);
    t.same(answers.map((a) => a.status), [200, 200, 200]);
    await eventsSettled(app.pool);
    t.same(paypal.captures, [order.id], "one capture");
    const completed = paypal.event("PAYMENT.CAPTURE.COMPLETED", paypal.captureResource(order.id));
    for (let i = 0; i < 2; i++) t.equal((await deliver(completed)).status, 200);
    await Promise.all([deliver(completed), deliver(completed), deliver(completed)]);
    await eventsSettled(app.pool);
    t.same(await creditState(app.pool, user.id), { balance: transaction.credits, shortfall: 0, entries: 1, sum: transaction.credits });
    t.equal(await status(transaction.id), "succeeded");
    const captureId = await app.pool.oneFirst(sql.type(z.object({ id: z.string().nullable() }))`select provider_capture_id as id from credit_transactions where id = ${transaction.id}`);
    t.equal(captureId, order.captureId, "the capture id is kept");
  });

  await t.test("a refund reverses the credits; a denied capture fails its transaction", async (t) => {
    const foreignRefund = { ...(paypal.refundResource(order.id) as { links: { href: string }[] }), links: [{ rel: "up", href: "https://api.paypal.example/v2/payments/captures/FOREIGNCAPTURE1" }] };
    t.equal((await deliver(paypal.event("PAYMENT.CAPTURE.REFUNDED", foreignRefund))).status, 200, "a refund of another shop's capture carrying our custom_id");
    await eventsSettled(app.pool);
    t.equal(await status(transaction.id), "succeeded", "changes nothing");
    t.same([transaction.credits, transaction.amount_cents], [550, 2500], "the seeded standard package");
    const partial = { ...paypal.refundResource(order.id), seller_payable_breakdown: { total_refunded_amount: { currency_code: "EUR", value: "5.00" } } };
    t.equal((await deliver(paypal.event("PAYMENT.CAPTURE.REFUNDED", partial))).status, 200, "5 of 25 euros refunded");
    await eventsSettled(app.pool);
    t.same(await creditState(app.pool, user.id), { balance: 440, shortfall: 0, entries: 2, sum: 440 }, "a fifth of the credits taken back");
    t.equal(await status(transaction.id), "succeeded", "the payment still counts");
    const refunded = paypal.event("PAYMENT.CAPTURE.REFUNDED", paypal.refundResource(order.id));
    t.equal((await deliver(refunded)).status, 200);
    await eventsSettled(app.pool);
    t.same(await creditState(app.pool, user.id), { balance: 0, shortfall: 0, entries: 3, sum: 0 }, "the whole refund takes the rest");
    t.equal(await status(transaction.id), "refunded");

    const second = await me.post("/api/credits/purchase", { package_id: 1, payment_method: "walletprovider" });
    const denied = paypal.event("PAYMENT.CAPTURE.DENIED", { id: "CAPTURE2", status: "DECLINED", custom_id: String(second.body.transaction.id) });
    t.equal((await deliver(denied)).status, 200);
    await until(async () => (await status(second.body.transaction.id)) === "failed", { message: "the denied transaction to fail" });
    t.pass("failed");
  });

  await t.test("a plan paid by wallet for a project deleted meanwhile is refunded at the wallet provider, and the buyer told", async (t) => {
    const pro = ((await me.get("/api/plans")).body.data as { id: number; code: string; price_cents: number }[]).find((p) => p.code === "pro")!;
    const project = (await me.post("/api/projects", { name: "Gone before paid" })).body.project;
    const started = await me.post("/api/subscriptions", { project_id: project.id, plan_id: pro.id, payment_method: "walletprovider" });
    t.equal(started.status, 202, started.text);
    t.equal((await me.delete(`/api/projects/${project.id}`)).status, 200);
    const paid = paypal.orders.get(started.body.transaction.provider_order_id)!;
    t.equal((await deliver(paypal.event("CHECKOUT.ORDER.APPROVED", { id: paid.id, status: "APPROVED", purchase_units: [{ custom_id: paid.customId }] }))).status, 200);
    await eventsSettled(app.pool);
    t.equal((await deliver(paypal.event("PAYMENT.CAPTURE.COMPLETED", paypal.captureResource(paid.id)))).status, 200);
    await eventsSettled(app.pool);
    await refundsSettled(app.pool);
    t.same(paypal.refunds.map((r) => r.captureId), [paid.captureId], "the capture is refunded once");
    t.same(await automaticRefund(app.pool, started.body.transaction.id), {
      status: "refunded", refund_reason: "project_deleted", provider_refund_id: paypal.refunds[0]!.id, refunded_cents: pro.price_cents, invoices: 0, mails: 1,
    });
    t.equal((await deliver(paypal.event("PAYMENT.CAPTURE.REFUNDED", paypal.refundResource(paid.id)))).status, 200, "PayPal's own refund event");
    await eventsSettled(app.pool);
    t.equal(await status(started.body.transaction.id), "refunded", "changes nothing");
  });
});
