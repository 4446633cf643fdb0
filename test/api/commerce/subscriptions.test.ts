import t from "tap";
import { z } from "zod";
import { grantCredits } from "../../../shared/credits/ledger.ts";
import { sql, type DatabasePool } from "../../../shared/db/pool.ts";
import { createLogger } from "../../../shared/logger.ts";
import { isPatron } from "../../../shared/patrons/membership.ts";
import { PostgresStorage } from "../../../shared/storage/postgresStorage.ts";
import renew from "../../../workers/tasks/subscriptions__renew.ts";
import type { TaskContext } from "../../../workers/context.ts";
import { startTestApp, type TestApp } from "../../support/app.ts";
import { buildUserWithToken, lockedOrArchivedRefusals, setProjectState } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { creditState } from "../../support/payments.ts";

const DAY = 86_400_000;

/** Runs the daily job as the scheduler would, with its clock at `at`. */
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
  return (await renew.run({ _cron: { ts: at.toISOString() } }, ctx)) as { subscriptions: { renewed: number; expired: number; failed: number }; patrons: { renewed: number; lapsed: number } };
}

const give = (pool: DatabasePool, userId: number, amount: number, key: string) =>
  grantCredits(pool, { userId, amount, reason: "test", referenceType: null, referenceId: null, idempotencyKey: key });

const mails = (pool: DatabasePool, kind: string) =>
  pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from jobs where kind = 'emails__send' and payload->>'kind' = ${kind}`);

t.test("subscriptions bought, renewed by the daily job, expired when cancelled, renewed by hand", async (t) => {
  const app = await startTestApp(t);
  const { user, token } = await buildUserWithToken(app.pool);
  const me = client(app.url, token);
  const plans = (await me.get("/api/plans")).body.data as { id: number; code: string; price_credits: number; credits: number }[];
  const pro = plans.find((p) => p.code === "pro")!;
  const project = (await me.post("/api/projects", { name: "Shop" })).body.project;
  await give(app.pool, user.id, 1000, "start");

  const bought = await me.post("/api/subscriptions", { project_id: project.id, plan_id: pro.id });
  t.equal(bought.status, 201, bought.text);
  const sub = bought.body.subscription;
  t.match(sub, { project_id: project.id, plan_id: pro.id, credits_allocated: pro.credits, credits_used: 0, is_expired: false, auto_renew: true });
  t.equal((await creditState(app.pool, user.id)).balance, 1000 - pro.price_credits, "paid in credits");

  const stranger = await buildUserWithToken(app.pool);
  t.equal((await client(app.url, stranger.token).post(`/api/subscriptions/${sub.id}/cancel`)).status, 404, "a stranger cannot see it");
  t.equal((await client(app.url, stranger.token).post("/api/subscriptions", { project_id: project.id, plan_id: pro.id })).status, 404);
  t.equal((await me.post("/api/subscriptions", { project_id: project.id, plan_id: 99999 })).status, 422, "unknown plan");

  const firstEnd = new Date(sub.expires_at).getTime();
  let run = await runRenewalAt(app, new Date(firstEnd + DAY));
  t.same(run.subscriptions, { renewed: 1, expired: 0, failed: 0 }, "the job renews a period that ended");
  const renewed = (await me.get("/api/subscriptions")).body.data.find((s: { id: number }) => s.id === sub.id);
  t.equal(new Date(renewed.expires_at).getTime(), firstEnd + 30 * DAY, "from the end of the period, not from the run");
  t.equal((await creditState(app.pool, user.id)).balance, 1000 - 2 * pro.price_credits, "charged once");
  run = await runRenewalAt(app, new Date(firstEnd + DAY));
  t.same(run.subscriptions, { renewed: 0, expired: 0, failed: 0 }, "running the same tick again does nothing");

  const cancelled = await me.post(`/api/subscriptions/${sub.id}/cancel`);
  t.equal(cancelled.status, 200);
  t.equal(cancelled.body.subscription.auto_renew, false);
  t.equal(cancelled.body.subscription.is_expired, false, "still active until it ends");
  t.equal((await me.put(`/api/projects/${project.id}`, { name: "Shop 2" })).status, 200, "writable while active");

  run = await runRenewalAt(app, new Date(firstEnd + 31 * DAY));
  t.same(run.subscriptions, { renewed: 0, expired: 1, failed: 0 }, "a cancelled period expires at the job's clock");
  const refused = await me.put(`/api/projects/${project.id}`, { name: "Shop 3" });
  t.equal(refused.status, 402, "the project is soft-locked");
  t.equal(refused.body.code, "subscription_expired");
  t.equal((await me.get(`/api/projects/${project.id}`)).body.project.subscription.is_expired, true);
  t.equal(await mails(app.pool, "subscription_expired"), 1, "the owner is e-mailed");

  await me.post(`/api/credits/purchase`, {}); // a refused request in between changes nothing
  const tooPoor = await buildUserWithToken(app.pool);
  t.equal((await client(app.url, tooPoor.token).post(`/api/subscriptions/${sub.id}/renew`)).status, 404, "renewing takes the project");
  const poorer = await me.post(`/api/subscriptions/${sub.id}/renew`);
  t.equal(poorer.status, 402, "renewal needs credits");
  t.equal(poorer.body.code, "insufficient_credits");
  t.equal((await me.put(`/api/projects/${project.id}`, { name: "Shop 3" })).status, 402, "still locked");
  await give(app.pool, user.id, 300, "top-up");
  const renewedByHand = await me.post(`/api/subscriptions/${sub.id}/renew`);
  t.equal(renewedByHand.status, 200, renewedByHand.text);
  t.match(renewedByHand.body.subscription, { is_expired: false, auto_renew: true, renewal_error: null });
  t.equal((await me.put(`/api/projects/${project.id}`, { name: "Shop 3" })).status, 200, "the renewal lifts the lock");
  const state = await creditState(app.pool, user.id);
  t.equal(state.balance, 1300 - 3 * pro.price_credits, "three periods paid");
  t.equal(state.sum, state.balance);
});

t.test("an automatic renewal the credits do not cover expires the period and tells the owner", async (t) => {
  const app = await startTestApp(t);
  const { user, token } = await buildUserWithToken(app.pool);
  const me = client(app.url, token);
  const pro = ((await me.get("/api/plans")).body.data as { id: number; code: string; price_credits: number }[]).find((p) => p.code === "pro")!;
  const project = (await me.post("/api/projects", { name: "Blog" })).body.project;
  await give(app.pool, user.id, pro.price_credits + 10, "start");
  const sub = (await me.post("/api/subscriptions", { project_id: project.id, plan_id: pro.id })).body.subscription;
  const run = await runRenewalAt(app, new Date(new Date(sub.expires_at).getTime() + 1000));
  t.same(run.subscriptions, { renewed: 0, expired: 0, failed: 1 });
  const listed = (await me.get("/api/subscriptions")).body.data.find((s: { id: number }) => s.id === sub.id);
  t.match(listed, { is_expired: true, renewal_error: "insufficient_credits", auto_renew: false });
  t.equal((await creditState(app.pool, user.id)).balance, 10, "nothing charged");
  t.equal(await mails(app.pool, "subscription_renewal_failed"), 1);
  t.equal((await me.put(`/api/projects/${project.id}`, { name: "Blog 2" })).status, 402);
});

t.test("patron membership bought with credits, renewed by the daily job, lapsing when cancelled", async (t) => {
  const app = await startTestApp(t);
  const { user, token } = await buildUserWithToken(app.pool);
  const me = client(app.url, token);
  const levels = (await me.get("/api/patron/levels")).body;
  t.equal(levels.status.is_patron, false);
  const level = levels.data[0] as { level: number; price_credits: number; duration_days: number };
  t.equal((await me.post("/api/patron/subscribe", { level: level.level })).status, 402, "no credits: 402");
  t.equal(await isPatron(app.pool, user.id), false, "and no period");
  await give(app.pool, user.id, level.price_credits * 2, "start");
  const joined = await me.post("/api/patron/subscribe", { level: level.level });
  t.equal(joined.status, 201, joined.text);
  t.match(joined.body.status, { is_patron: true, patron_level: level.level, cancelled: false });
  t.equal(await isPatron(app.pool, user.id), true, "isPatron reads the bought period");
  const end = new Date(joined.body.status.expires_at).getTime();

  let run = await runRenewalAt(app, new Date(end + 1000));
  t.same(run.patrons, { renewed: 1, lapsed: 0 });
  t.equal(await isPatron(app.pool, user.id, new Date(end + 2 * DAY)), true, "covered after the first period");
  t.equal((await creditState(app.pool, user.id)).balance, 0);

  t.equal((await me.post("/api/patron/cancel")).status, 200);
  run = await runRenewalAt(app, new Date(end + level.duration_days * DAY + 1000));
  t.same(run.patrons, { renewed: 0, lapsed: 1 }, "cancelled: not renewed");
  t.equal(await isPatron(app.pool, user.id, new Date(end + level.duration_days * DAY + 2000)), false);
});

t.test("a locked or archived project's subscription is neither bought, cancelled nor renewed; nothing is charged", async (t) => {
  const app = await startTestApp(t);
  const { user, token } = await buildUserWithToken(app.pool);
  const me = client(app.url, token);
  const pro = ((await me.get("/api/plans")).body.data as { id: number; code: string }[]).find((p) => p.code === "pro")!;
  const project = (await me.post("/api/projects", { name: "Shelved" })).body.project;
  await give(app.pool, user.id, 1000, "start");
  const sub = (await me.post("/api/subscriptions", { project_id: project.id, plan_id: pro.id })).body.subscription;
  const stored = () => app.pool.oneFirst(sql.type(z.object({ rows: z.string() }))`select jsonb_agg(to_jsonb(s) order by s.id)::text as rows from subscriptions s where project_id = ${project.id}`);
  const before = { rows: await stored(), balance: (await creditState(app.pool, user.id)).balance };
  for (const { state, status, code } of lockedOrArchivedRefusals) {
    await setProjectState(app.pool, project.id, state);
    for (const [path, body] of [["/api/subscriptions", { project_id: project.id, plan_id: pro.id }], [`/api/subscriptions/${sub.id}/cancel`], [`/api/subscriptions/${sub.id}/renew`]] as const) {
      const res = await me.post(path, body);
      t.match({ status: res.status, code: res.body?.code }, { status, code }, `${state}: ${path}`);
    }
  }
  t.same({ rows: await stored(), balance: (await creditState(app.pool, user.id)).balance }, before, "no subscription changed, no credit spent");
});

t.test("subscribing twice to the plan that is running charges once: the second answer is 409, also when both come at once", async (t) => {
  const app = await startTestApp(t);
  const { user, token } = await buildUserWithToken(app.pool);
  const me = client(app.url, token);
  const plans = (await me.get("/api/plans")).body.data as { id: number; code: string; price_credits: number }[];
  const pro = plans.find((p) => p.code === "pro")!;
  const team = plans.find((p) => p.code === "team")!;
  const project = (await me.post("/api/projects", { name: "Double click" })).body.project;
  await give(app.pool, user.id, 5000, "start");
  const periods = () => app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from subscriptions where project_id = ${project.id} and plan_id = ${pro.id}`);

  const both = await Promise.all([me.post("/api/subscriptions", { project_id: project.id, plan_id: pro.id }), me.post("/api/subscriptions", { project_id: project.id, plan_id: pro.id })]);
  t.same(both.map((r) => r.status).sort(), [201, 409], "one buys, the other is refused");
  const refused = both.find((r) => r.status === 409)!;
  t.equal(refused.body.code, "subscription_active");
  t.match(refused.body.message, /renew/);
  t.equal((await creditState(app.pool, user.id)).balance, 5000 - pro.price_credits, "one period charged");
  t.equal(await periods(), 1, "one period written");

  const again = await me.post("/api/billing/subscription", { project_id: project.id, plan_id: pro.id });
  t.equal(again.status, 409, "later, too (the billing route is the same operation)");
  const byCard = await me.post("/api/subscriptions", { project_id: project.id, plan_id: pro.id, payment_method: "cardprocessor" });
  t.equal(byCard.status, 409, "and before any payment is started");
  t.equal(await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from credit_transactions`), 0, "no payment started");

  const upgraded = await me.post("/api/subscriptions", { project_id: project.id, plan_id: team.id });
  t.equal(upgraded.status, 201, "another plan may replace it");
  t.equal((await creditState(app.pool, user.id)).balance, 5000 - pro.price_credits - team.price_credits);
});

t.test("a stranger cannot tell an existing subscription id from a missing one: both answer the same 404", async (t) => {
  const app = await startTestApp(t);
  const { user, token } = await buildUserWithToken(app.pool);
  const me = client(app.url, token);
  const pro = ((await me.get("/api/plans")).body.data as { id: number; code: string; price_credits: number }[]).find((p) => p.code === "pro")!;
  const project = (await me.post("/api/projects", { name: "Private" })).body.project;
  await give(app.pool, user.id, 1000, "start");
  const sub = (await me.post("/api/subscriptions", { project_id: project.id, plan_id: pro.id })).body.subscription;
  const stranger = client(app.url, (await buildUserWithToken(app.pool)).token);
  for (const action of ["cancel", "renew"]) {
    const existing = await stranger.post(`/api/subscriptions/${sub.id}/${action}`);
    const missing = await stranger.post(`/api/subscriptions/${sub.id + 1000}/${action}`);
    t.equal(existing.status, 404, action);
    t.same(existing.body, missing.body, `${action}: the same answer as for a missing id`);
  }
  t.equal((await creditState(app.pool, user.id)).balance, 1000 - pro.price_credits, "nothing renewed on the stranger's request");
});
