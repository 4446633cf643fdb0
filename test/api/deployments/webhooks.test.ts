/**
 * Outbound webhooks against a receiver on loopback: signed code_generated deliveries from
 * the outbox, replay after an outage (once), manual and scheduled deliveries, deactivation
 * after repeated failures, the secret shown once and stored sealed.
 */
import { createHmac } from "node:crypto";
import t, { type Test } from "tap";
import { z } from "zod";
import { sql, type DatabasePool } from "../../../shared/db/pool.ts";
import { verifyBody } from "../../../shared/webhooks/signature.ts";
import { startTestApp } from "../../support/app.ts";
import { buildGeneration, findSecrets } from "../../support/deploymentFactories.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { startWebhookReceiver, type ReceivedHook } from "../../support/webhookReceiver.ts";

const secret = "whsec-Receiver-Shared-Secret-0123";

/** What a receiver does: the README's check, written independently of the service's code. */
function verifiedPayload(t: Test, hook: ReceivedHook, key: string): Record<string, unknown> {
  const body = hook.body;
  const parsed = JSON.parse(body) as Record<string, unknown>;
  const { signature, ...rest } = parsed;
  const expected = createHmac("sha256", key).update(JSON.stringify(rest)).digest("hex");
  t.equal(signature, expected, "signature = HMAC-SHA256 over the payload without signature");
  t.equal(hook.headers["x-signature-256"], `sha256=${expected}`, "the header carries the same value");
  t.ok(verifyBody(body, key), "the body-suffix rule of the docs verifies too");
  t.notOk(verifyBody(body, `${key}x`), "another key does not");
  return parsed;
}

async function deliveriesOf(pool: DatabasePool, webhookId: number) {
  return pool.any(sql.type(z.object({ id: z.number(), status: z.string(), attempts: z.number(), source_key: z.string() }))`
    select id, status, attempts, source_key from webhook_deliveries where webhook_id = ${webhookId} order by id`);
}

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

t.test("webhooks", async (t) => {
  const app = await startTestApp(t, { worker: true });
  const receiver = await startWebhookReceiver(t);
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = await buildProject(app.pool, user.id);
  const seen: unknown[] = [];

  const created = await api.post(`/api/projects/${project}/webhooks`, { event_type: "code_generated", target_url: receiver.url, secret_key: secret });
  t.equal(created.status, 201, created.text);
  t.equal(created.body.webhook.secret_key, secret, "the secret is answered once, at creation");
  const hookId = created.body.webhook.id;

  await t.test("the secret is never shown again, and generated when not given", async (t) => {
    const shown = await api.get(`/api/webhooks/${hookId}`);
    seen.push(shown.body);
    t.equal(shown.body.webhook.has_secret_key, true);
    t.notOk("secret_key" in shown.body.webhook);
    const list = await api.get(`/api/projects/${project}/webhooks`);
    seen.push(list.body);
    t.equal(list.body.webhooks.length, 1);
    const generated = await api.post(`/api/projects/${project}/webhooks`, { event_type: "manual_trigger", target_url: receiver.url, is_active: false });
    t.equal(generated.status, 201);
    t.match(generated.body.webhook.secret_key, /^[A-Za-z0-9_-]{43}$/);
    t.equal((await api.delete(`/api/webhooks/${generated.body.webhook.id}`)).status, 200);
  });

  await t.test("validation", async (t) => {
    const bad = await api.post(`/api/projects/${project}/webhooks`, { event_type: "scheduled", target_url: "ftp://example.com/x", secret_key: "short" });
    t.equal(bad.status, 422);
    t.ok(bad.body.errors.target_url);
    t.ok(bad.body.errors.secret_key);
    const noCron = await api.post(`/api/projects/${project}/webhooks`, { event_type: "scheduled", target_url: receiver.url });
    t.same(Object.keys(noCron.body.errors), ["cron"]);
    const badCron = await api.post(`/api/projects/${project}/webhooks`, { event_type: "scheduled", target_url: receiver.url, cron: "61 * * * *" });
    t.match(badCron.body.errors.cron[0], /minute/);
    const sixFields = await api.post(`/api/projects/${project}/webhooks`, { event_type: "scheduled", target_url: receiver.url, cron: "* * * * * *" });
    t.equal(sixFields.status, 422, "seconds are refused: the tick is a minute");
    const badZone = await api.post(`/api/projects/${project}/webhooks`, { event_type: "scheduled", target_url: receiver.url, cron: "0 * * * *", timezone: "Mars/Olympus" });
    t.ok(badZone.body.errors.timezone);
    const cronElsewhere = await api.post(`/api/projects/${project}/webhooks`, { event_type: "manual_trigger", target_url: receiver.url, cron: "0 * * * *" });
    t.ok(cronElsewhere.body.errors.cron);
    const creds = await api.post(`/api/projects/${project}/webhooks`, { event_type: "manual_trigger", target_url: "https://user:pw@example.com/h" });
    t.ok(creds.body.errors.target_url);
    const count = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from webhooks`);
    t.equal(count, 1, "nothing was stored");
  });

  await t.test("a recorded CodeGenerated event is delivered promptly, signed", async (t) => {
    const started = Date.now();
    const generation = await buildGeneration(app.pool, project, user.id, undefined, { withEvent: true });
    const [hook] = await receiver.waitFor(1);
    t.ok(Date.now() - started < 10_000, `delivered in ${Date.now() - started} ms, without waiting for the cron tick`);
    const payload = verifiedPayload(t, hook!, secret);
    t.same(Object.keys(payload), ["event", "project_id", "code_generation_id", "timestamp", "signature"]);
    t.match(payload, { event: "code_generated", project_id: project, code_generation_id: generation });
    t.ok(!Number.isNaN(Date.parse(payload.timestamp as string)), "ISO timestamp");
    t.equal(hook!.headers["x-webhook-event"], "code_generated");
    const processed = await until("the event marked processed", async () =>
      app.pool.oneFirst(sql.type(z.object({ done: z.boolean() }))`select bool_and(processed_at is not null) as done from outbox_events where event_type = 'CodeGenerated'`),
    );
    t.ok(processed);
    const log = await api.get(`/api/webhooks/${hookId}/deliveries`);
    seen.push(log.body);
    t.match(log.body.data[0], { event: "code_generated", status: "succeeded", attempts: 1, response_status: 200 });
  });

  await t.test("a receiver outage: the delivery is retried with back-off and arrives once it recovers; a replayed event delivers nothing twice", async (t) => {
    receiver.status = 503;
    const before = receiver.received.length;
    await buildGeneration(app.pool, project, user.id, undefined, { withEvent: true });
    await receiver.waitFor(before + 1);
    receiver.status = 200;
    const [failed, replayed] = (await receiver.waitFor(before + 2, 30_000)).slice(before);
    t.equal(failed!.body, replayed!.body, "the same signed payload is replayed");
    t.equal(failed!.headers["x-webhook-delivery"], replayed!.headers["x-webhook-delivery"], "as the same delivery");
    const deliveries = await until("the delivery to succeed", async () => {
      const rows = await deliveriesOf(app.pool, hookId);
      return rows.at(-1)?.status === "succeeded" ? rows : undefined;
    });
    t.match(deliveries.at(-1), { status: "succeeded", attempts: 2 });

    // The outbox is read again from the start (as after a crash before it was marked).
    await app.pool.query(sql.type(z.object({}))`update outbox_events set processed_at = null`);
    await app.pool.query(sql.type(z.object({}))`select graphile_worker.add_job('webhooks__dispatch', '{}'::json)`);
    await until("the replay to be processed", async () =>
      app.pool.oneFirst(sql.type(z.object({ done: z.boolean() }))`select bool_and(processed_at is not null) as done from outbox_events`),
    );
    await new Promise((resolve) => setTimeout(resolve, 1000));
    t.equal((await deliveriesOf(app.pool, hookId)).length, deliveries.length, "no new delivery");
    t.equal(receiver.received.length, before + 2, "no request twice");
  });

  await t.test("manual trigger", async (t) => {
    const manual = await api.post(`/api/projects/${project}/webhooks`, { event_type: "manual_trigger", target_url: receiver.url, secret_key: secret });
    const before = receiver.received.length;
    const res = await api.post(`/api/webhooks/${manual.body.webhook.id}/trigger`, {});
    t.equal(res.status, 202, res.text);
    t.match(res.body.delivery, { event: "manual_trigger", status: "pending" });
    const hook = (await receiver.waitFor(before + 1))[before]!;
    const latest = await app.pool.oneFirst(sql.type(z.object({ id: z.number() }))`select max(id) as id from code_generations`);
    t.match(verifiedPayload(t, hook, secret), { event: "manual_trigger", project_id: project, code_generation_id: latest });
    const foreign = await buildGeneration(app.pool, await buildProject(app.pool, user.id), user.id);
    const wrong = await api.post(`/api/webhooks/${manual.body.webhook.id}/trigger`, { code_generation_id: foreign });
    t.equal(wrong.status, 422);
  });

  await t.test("scheduled: the matching tick delivers once, however often it runs", async (t) => {
    const res = await api.post(`/api/projects/${project}/webhooks`, { event_type: "scheduled", target_url: receiver.url, secret_key: secret, cron: "30 9 * * 1", timezone: "Europe/Berlin" });
    t.equal(res.status, 201, res.text);
    t.ok(res.body.webhook.next_run_at);
    const id = res.body.webhook.id;
    const before = receiver.received.length;
    // Monday 2024-01-08 09:30 in Berlin is 08:30 UTC; 09:30 UTC does not match.
    for (const ts of ["2024-01-08T09:30:00Z", "2024-01-08T08:30:00Z", "2024-01-08T08:30:00Z"]) {
      await app.pool.query(sql.type(z.object({}))`select graphile_worker.add_job('webhooks__schedule', json_build_object('_cron', json_build_object('ts', ${ts}::text)))`);
    }
    const [hook] = (await receiver.waitFor(before + 1)).slice(before);
    t.match(verifiedPayload(t, hook!, secret), { event: "scheduled", project_id: project, timestamp: "2024-01-08T08:30:00.000Z" });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    t.same((await deliveriesOf(app.pool, id)).map((d) => d.source_key), ["scheduled:2024-01-08T08:30:00.000Z"], "one delivery for the tick");
  });

  await t.test("the secret is stored sealed and appears in no response or row", async (t) => {
    t.notMatch(JSON.stringify(seen), secret);
    t.same(await findSecrets(app.pool, [secret]), []);
  });
});

t.test("a webhook that keeps failing is deactivated", async (t) => {
  const app = await startTestApp(t, { worker: true, env: { WEBHOOK_MAX_ATTEMPTS: "1", WEBHOOK_DEACTIVATE_AFTER_FAILURES: "2" } });
  const receiver = await startWebhookReceiver(t);
  receiver.status = 500;
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = await buildProject(app.pool, user.id);
  const created = await api.post(`/api/projects/${project}/webhooks`, { event_type: "manual_trigger", target_url: receiver.url });
  const id = created.body.webhook.id;
  for (let i = 1; i <= 2; i += 1) {
    t.equal((await api.post(`/api/webhooks/${id}/trigger`, {})).status, 202);
    await until(`failed delivery ${i}`, async () => (await deliveriesOf(app.pool, id)).filter((d) => d.status === "failed").length === i);
  }
  const hook = (await api.get(`/api/webhooks/${id}`)).body.webhook;
  t.match(hook, { is_active: false, consecutive_failures: 2 });
  t.ok(hook.deactivated_at);
  t.equal((await api.post(`/api/webhooks/${id}/trigger`, {})).status, 409, "an inactive webhook is not triggered");
  const reactivated = await api.put(`/api/webhooks/${id}`, { is_active: true });
  t.match(reactivated.body.webhook, { is_active: true, consecutive_failures: 0, deactivated_at: null });
  const job = await app.pool.one(sql.type(z.object({ status: z.string(), error: z.string().nullable() }))`
    select status, error from jobs where kind = 'webhooks__deliver' order by id limit 1`);
  t.match(job, { status: "failed", error: /HTTP 500/ });
});
