/**
 * Billing e-mails and the notification settings, received by a real SMTP peer: notices about a
 * plan (a subscription ended, a renewal failed) follow the owner's `billing` choice in
 * `/settings`, like every other notification; the receipt of a refund (`payment_refunded`) is
 * sent whatever the choice, as security mails are.
 */
import t from "tap";
import { z } from "zod";
import { grantCredits } from "../../../shared/credits/ledger.ts";
import { sql } from "../../../shared/db/pool.ts";
import { createLogger } from "../../../shared/logger.ts";
import { PostgresStorage } from "../../../shared/storage/postgresStorage.ts";
import type { TaskContext } from "../../../workers/context.ts";
import renew from "../../../workers/tasks/subscriptions__renew.ts";
import { startTestApp, type TestApp } from "../../support/app.ts";
import { buildUserWithToken } from "../../support/factories.ts";
import { client, request } from "../../support/http.ts";
import { eventsSettled, refundsSettled } from "../../support/payments.ts";
import { startStripeStandIn } from "../../support/peers/stripePeer.ts";
import { startSmtp } from "../../support/smtp.ts";
import { until } from "../../support/wait.ts";

/** Runs the daily renewal job as the scheduler would, with its clock at `at`. */
async function runRenewalAt(app: TestApp, at: Date) {
  const log = createLogger("silent");
  const ctx: TaskContext = {
    deps: { config: app.config, pool: app.pool, pgPool: app.db.pgPool, log, storage: new PostgresStorage(app.pool) },
    jobId: null,
    attempt: 1,
    maxAttempts: 1,
    log,
    signal: new AbortController().signal,
    progress: async () => {},
  };
  return (await renew.run({ _cron: { ts: at.toISOString() } }, ctx)) as { subscriptions: { renewed: number; expired: number; failed: number } };
}

t.test("billing e-mails and the notification settings", async (t) => {
  const smtp = await startSmtp(t);
  const stripe = await startStripeStandIn();
  t.teardown(() => stripe.close());
  const app = await startTestApp(t, { worker: true, env: { ...stripe.env, SMTP_URL: smtp.url } });
  const mailsSettled = () =>
    until(
      async () =>
        (await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
          select count(*)::int as n from jobs where kind = 'emails__send' and status not in ('succeeded', 'failed', 'cancelled')`)) === 0,
      { message: "the mail jobs to finish" },
    );
  const mailsTo = (email: string) => smtp.messages.filter((m) => m.to.toLowerCase().includes(email.toLowerCase()));

  const loud = await buildUserWithToken(app.pool, { name: "Lou Loud" });
  const quiet = await buildUserWithToken(app.pool, { name: "Quinn Quiet" });
  const asQuiet = client(app.url, quiet.token);
  const defaults = await asQuiet.get("/api/settings");
  t.same(defaults.body.settings.notifications.billing, { email: true, push: true }, "billing notices: on by default");
  const off = await asQuiet.put("/api/settings", { notifications: { billing: { email: false } } });
  t.equal(off.status, 200, off.text);
  t.same(off.body.settings.notifications.billing, { email: false, push: true });

  await t.test("a plan that ended or could not be renewed: e-mailed only to owners who want billing notices", async (t) => {
    const ends: number[] = [];
    for (const [owner, cancel] of [[loud, true], [quiet, true], [loud, false], [quiet, false]] as const) {
      const as = client(app.url, owner.token);
      const pro = ((await as.get("/api/plans")).body.data as { id: number; code: string; price_credits: number }[]).find((p) => p.code === "pro")!;
      await grantCredits(app.pool, { userId: owner.user.id, amount: pro.price_credits, reason: "test", referenceType: null, referenceId: null, idempotencyKey: `plan-${owner.user.id}-${cancel}` });
      const project = (await as.post("/api/projects", { name: `${cancel ? "Cancelled" : "Unpaid"} ${owner.user.name}` })).body.project;
      const sub = (await as.post("/api/subscriptions", { project_id: project.id, plan_id: pro.id })).body.subscription;
      if (cancel) t.equal((await as.post(`/api/subscriptions/${sub.id}/cancel`)).status, 200);
      ends.push(new Date(sub.expires_at).getTime());
    }
    const run = await runRenewalAt(app, new Date(Math.max(...ends) + 1000));
    t.same(run.subscriptions, { renewed: 0, expired: 2, failed: 2 }, "two cancelled periods ended, two renewals found no credits");
    await smtp.waitFor(loud.user.email, /has ended/);
    await smtp.waitFor(loud.user.email, /could not renew/);
    await mailsSettled();
    t.same(mailsTo(loud.user.email).map((m) => m.subject).sort(), ["The subscription of Cancelled Lou Loud has ended", "We could not renew the subscription of Unpaid Lou Loud"]);
    t.same(mailsTo(quiet.user.email), [], "none to the owner who turned billing e-mails off");
  });

  await t.test("the receipt of a refund goes out whatever the choice", async (t) => {
    const pro = ((await asQuiet.get("/api/plans")).body.data as { id: number; code: string }[]).find((p) => p.code === "pro")!;
    const project = (await asQuiet.post("/api/projects", { name: "Gone before paid" })).body.project;
    const started = await asQuiet.post("/api/subscriptions", { project_id: project.id, plan_id: pro.id, payment_method: "cardprocessor" });
    t.equal(started.status, 202, started.text);
    t.equal((await asQuiet.delete(`/api/projects/${project.id}`)).status, 200);
    const intent = stripe.intents.get(started.body.transaction.provider_payment_id)!;
    const { body, signature } = stripe.signed(stripe.event("payment_intent.succeeded", { ...intent, status: "succeeded" }));
    t.equal((await request(app.url, "POST", "/api/cardprocessor/webhook", { raw: true, body, headers: { "content-type": "application/json", "stripe-signature": signature } })).status, 200);
    await eventsSettled(app.pool);
    await refundsSettled(app.pool);
    const mail = await smtp.waitFor(quiet.user.email, /refunding your payment/);
    t.match(mail.text, /Hello Quinn Quiet/);
  });
});
