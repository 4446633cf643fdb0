/**
 * Credit notes through the HTTP interface: every refund of an invoiced payment, whole or
 * partial, by the card processor's or the wallet provider's webhook, gets exactly one credit
 * note (replayed and repeated events none more), numbered in its own gap-free series, naming
 * the invoice, with the buyer as invoiced and the VAT split at the invoice's rate; payments
 * refunded before they were invoiced, or never delivered, get none.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildUserWithToken } from "../../support/factories.ts";
import { client, request } from "../../support/http.ts";
import { eventsSettled, refundsSettled } from "../../support/payments.ts";
import { startPaypalStandIn } from "../../support/peers/paypalPeer.ts";
import { startStripeStandIn } from "../../support/peers/stripePeer.ts";

interface Document {
  id: number;
  kind: "invoice" | "credit_note";
  number: string;
  transaction_id: number;
  original_invoice: { id: number; number: string } | null;
  buyer: { company: string | null; country: string | null; vat_id: string | null };
  net_cents: number;
  vat_rate: number;
  vat_cents: number;
  total_cents: number;
  pdf_url: string;
}

t.test("credit notes", async (t) => {
  const stripe = await startStripeStandIn();
  const paypal = await startPaypalStandIn();
  t.teardown(() => Promise.all([stripe.close(), paypal.close()]));
  const app = await startTestApp(t, { worker: true, env: { ...stripe.env, ...paypal.env } });
  const year = new Date().getUTCFullYear();

  const deliverCard = async (event: object) => {
    const { body, signature } = stripe.signed(event);
    const res = await request(app.url, "POST", "/api/cardprocessor/webhook", { raw: true, body, headers: { "content-type": "application/json", "stripe-signature": signature } });
    t.equal(res.status, 200, `the webhook is accepted: ${res.text}`);
    await eventsSettled(app.pool);
  };
  const deliverWallet = async (event: object) => {
    const { body, headers } = paypal.signed(event);
    const res = await request(app.url, "POST", "/api/walletprovider/webhook", { raw: true, body, headers: { "content-type": "application/json", ...headers } });
    t.equal(res.status, 200, `the webhook is accepted: ${res.text}`);
    await eventsSettled(app.pool);
  };
  const cardSucceeded = (intentId: string) => deliverCard(stripe.event("payment_intent.succeeded", { ...stripe.intents.get(intentId)!, status: "succeeded" }));
  const cardRefundedSoFar = (intentId: string, cents: number) =>
    stripe.event("charge.refunded", { ...stripe.refundedCharge(intentId), amount_refunded: cents, refunded: cents === stripe.intents.get(intentId)!.amount });
  /** A buyer in Germany with a company on their invoices. */
  const germanBuyer = async () => {
    const buyer = await buildUserWithToken(app.pool);
    await app.pool.query(sql.type(z.object({}))`update users set company_name = 'Acme GmbH', company_country = 'DE', vat_id = 'DE123456789' where id = ${buyer.user.id}`);
    return { ...buyer, as: client(app.url, buyer.token) };
  };
  const documents = async (as: ReturnType<typeof client>) => {
    const listed = await as.get("/api/billing/invoices?per_page=100");
    t.equal(listed.status, 200, listed.text);
    return listed.body.data as Document[];
  };
  const notesOf = (transactionId: number) =>
    app.pool.any(sql.type(z.object({ number: z.string(), total_cents: z.number() }))`
      select number, total_cents from credit_notes where transaction_id = ${transactionId} order by id`);

  await t.test("a card payment refunded in steps: one credit note per step, at the invoice's VAT rate, adding up to the invoice", async (t) => {
    const { user, as, token } = await germanBuyer();
    const bought = await as.post("/api/credits/purchase", { package_id: 1, payment_method: "cardprocessor" });
    const { id, provider_payment_id: intentId } = bought.body.transaction as { id: number; provider_payment_id: string };
    await cardSucceeded(intentId);
    const [invoice] = await documents(as);
    t.match(invoice, { kind: "invoice", original_invoice: null, total_cents: 500, net_cents: 420, vat_rate: 19 });

    // The buyer moves abroad and drops the company after the invoice: the credit notes keep the invoiced buyer.
    await app.pool.query(sql.type(z.object({}))`update users set company_name = null, company_country = 'FR', vat_id = null where id = ${user.id}`);
    const oneEuro = cardRefundedSoFar(intentId, 100);
    await deliverCard(oneEuro);
    await deliverCard(oneEuro);
    await deliverCard(cardRefundedSoFar(intentId, 100));
    let listed = await documents(as);
    t.equal(listed.length, 2, "one credit note for the refund of 1 euro, also when the event is replayed or repeated");
    const first = listed[0]!;
    t.match(first, {
      kind: "credit_note",
      number: `CN-${year}-000001`,
      transaction_id: id,
      original_invoice: { id: invoice!.id, number: invoice!.number },
      buyer: { company: "Acme GmbH", country: "DE", vat_id: "DE123456789" },
      total_cents: 100,
      vat_rate: 19,
      net_cents: 84,
      vat_cents: 16,
    }, "the refunded euro at 19 %, to the buyer as invoiced");
    t.not(first.id, invoice!.id, "its own id, apart from the invoices'");

    await deliverCard(cardRefundedSoFar(intentId, 250));
    await deliverCard(cardRefundedSoFar(intentId, 100));
    await deliverCard(stripe.event("charge.refunded", stripe.refundedCharge(intentId)));
    listed = await documents(as);
    const notes = listed.filter((d) => d.kind === "credit_note");
    t.same(notes.map((n) => [n.number, n.total_cents]), [[`CN-${year}-000003`, 250], [`CN-${year}-000002`, 150], [`CN-${year}-000001`, 100]], "newest first, no gaps; the late smaller total adds nothing");
    t.equal(notes.reduce((sum, n) => sum + n.total_cents, 0), invoice!.total_cents, "the credit notes add up to the invoice");
    t.equal(notes.reduce((sum, n) => sum + n.net_cents, 0), invoice!.net_cents, "net exactly");
    t.equal(notes.reduce((sum, n) => sum + n.vat_cents, 0), invoice!.vat_cents, "VAT exactly");
    for (const note of notes) t.equal(note.net_cents + note.vat_cents, note.total_cents);
    await deliverCard(stripe.event("charge.refunded", stripe.refundedCharge(intentId)));
    t.equal((await notesOf(id)).length, 3, "a refunded payment's refund event again adds none");

    const shown = await as.get(`/api/billing/invoices/${first.id}`);
    t.equal(shown.status, 200, shown.text);
    t.match(shown.body.invoice, { kind: "credit_note", number: `CN-${year}-000001` });
    t.match((await as.get(`/api/billing/invoices/${invoice!.id}`)).body.invoice, { kind: "invoice", number: invoice!.number, total_cents: 500 }, "the invoice is unchanged");
    const pdf = await fetch(`${app.url}${first.pdf_url}`, { headers: { authorization: `Bearer ${token}` } });
    t.equal(pdf.status, 200);
    t.equal(pdf.headers.get("content-type"), "application/pdf");
    t.match(pdf.headers.get("content-disposition"), `CN-${year}-000001.pdf`);
    t.equal(Buffer.from(await pdf.arrayBuffer()).subarray(0, 5).toString(), "%PDF-", "a PDF document");
    const stranger = client(app.url, (await buildUserWithToken(app.pool)).token);
    t.equal((await stranger.get(`/api/billing/invoices/${first.id}`)).status, 404, "another user's credit note is not found");
    t.equal((await stranger.get(`/api/billing/invoices/${first.id}/pdf`)).status, 404);
    t.same(await documents(stranger), [], "nor listed");
  });

  await t.test("refunds before the success: a whole one needs no credit note, a partial one gets it with the invoice", async (t) => {
    const { as } = await germanBuyer();
    const whole = await as.post("/api/credits/purchase", { package_id: 1, payment_method: "cardprocessor" });
    await deliverCard(stripe.event("charge.refunded", stripe.refundedCharge(whole.body.transaction.provider_payment_id)));
    await cardSucceeded(whole.body.transaction.provider_payment_id);
    t.same(await documents(as), [], "never invoiced, nothing to correct");

    const partly = await as.post("/api/credits/purchase", { package_id: 1, payment_method: "cardprocessor" });
    await deliverCard(cardRefundedSoFar(partly.body.transaction.provider_payment_id, 200));
    t.same(await documents(as), [], "still pending: no invoice, no credit note");
    await cardSucceeded(partly.body.transaction.provider_payment_id);
    const [note, invoice, ...rest] = await documents(as);
    t.equal(rest.length, 0);
    t.match(invoice, { kind: "invoice", transaction_id: partly.body.transaction.id, total_cents: 500 });
    t.match(note, { kind: "credit_note", transaction_id: partly.body.transaction.id, original_invoice: { id: invoice!.id }, total_cents: 200, net_cents: 168, vat_cents: 32 });
  });

  await t.test("a payment the service refunds because it delivered nothing has no invoice and no credit note", async (t) => {
    const { as } = await germanBuyer();
    const pro = ((await as.get("/api/plans")).body.data as { id: number; code: string }[]).find((p) => p.code === "pro")!;
    const project = (await as.post("/api/projects", { name: "Gone before paid" })).body.project;
    const started = await as.post("/api/subscriptions", { project_id: project.id, plan_id: pro.id, payment_method: "cardprocessor" });
    t.equal((await as.delete(`/api/projects/${project.id}`)).status, 200);
    await cardSucceeded(started.body.transaction.provider_payment_id);
    await refundsSettled(app.pool);
    t.equal(await app.pool.oneFirst(sql.type(z.object({ status: z.string() }))`select status from credit_transactions where id = ${started.body.transaction.id}`), "refunded");
    t.same(await documents(as), []);
  });

  await t.test("a wallet payment refunded in part and then whole", async (t) => {
    const { as } = await germanBuyer();
    const bought = await as.post("/api/credits/purchase", { package_id: 2, payment_method: "walletprovider" });
    const order = paypal.orders.get(bought.body.transaction.provider_order_id)!;
    await deliverWallet(paypal.event("CHECKOUT.ORDER.APPROVED", { id: order.id, status: "APPROVED", purchase_units: [{ custom_id: order.customId }] }));
    await deliverWallet(paypal.event("PAYMENT.CAPTURE.COMPLETED", paypal.captureResource(order.id)));
    const partial = paypal.event("PAYMENT.CAPTURE.REFUNDED", { ...paypal.refundResource(order.id), seller_payable_breakdown: { total_refunded_amount: { currency_code: "EUR", value: "5.00" } } });
    await deliverWallet(partial);
    await deliverWallet(partial);
    await deliverWallet(paypal.event("PAYMENT.CAPTURE.REFUNDED", paypal.refundResource(order.id)));
    const [second, first, invoice] = await documents(as);
    t.match(invoice, { kind: "invoice", total_cents: 2500, net_cents: 2101 });
    t.match(first, { kind: "credit_note", total_cents: 500, net_cents: 420, vat_cents: 80, original_invoice: { id: invoice!.id } });
    t.match(second, { kind: "credit_note", total_cents: 2000, net_cents: 1681, vat_cents: 319 });
    t.equal(Number(first!.number.slice(-6)) + 1, Number(second!.number.slice(-6)), "consecutive numbers");
  });
});
