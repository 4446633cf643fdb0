/**
 * Outbound webhooks against a receiver on loopback: signed code_generated deliveries from
 * the outbox, replay after an outage (an error answer, and a receiver that is down) once,
 * manual and scheduled deliveries, deactivation after repeated failures, the secret required,
 * rotated by PUT, stored sealed and never answered.
 */
import { createHmac } from "node:crypto";
import t, { type Test } from "tap";
import { z } from "zod";
import { sql, type DatabasePool } from "../../../shared/db/pool.ts";
import { verifyBody } from "../../../shared/webhooks/signature.ts";
import { startTestApp } from "../../support/app.ts";
import { buildGeneration, findSecrets, recordingClient } from "../../support/deploymentFactories.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { startWebhookReceiver, type ReceivedHook } from "../../support/webhookReceiver.ts";
import { until } from "../../support/wait.ts";

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

const deliveryStateRow = z.object({ status: z.string(), attempts: z.number(), error: z.string().nullable(), response_status: z.number().nullable() });

async function deliveryState(pool: DatabasePool, id: number) {
  return pool.one(sql.type(deliveryStateRow)`select status, attempts, error, response_status from webhook_deliveries where id = ${id}`);
}

/**
 * Skips graphile-worker's back-off (e^n s) of a delivery's job after its failed attempt
 * `attempts`: once the job is unlocked with that many attempts, it is due now. Waiting until
 * then matters: the worker sets `run_at` when the attempt fails, overwriting an earlier change.
 */
async function retryNow(pool: DatabasePool, deliveryId: number, attempts: number): Promise<void> {
  await until(async () =>
    pool.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
      update graphile_worker._private_jobs j set run_at = now()
      from webhook_deliveries d
      where d.id = ${deliveryId} and j.key = 'job:' || d.job_id and j.attempts = ${attempts} and j.locked_at is null
      returning j.id::text as id`),
    { message: `the job to wait after attempt ${attempts}` },
  );
}

/**
 * Waits until no webhook job is due or running: whatever a dispatch, tick or retry was going
 * to deliver has been delivered (or recorded). "Exactly once" is checked after this, not
 * after a pause that a busy machine may outlast.
 */
async function webhookJobsSettled(pool: DatabasePool): Promise<void> {
  await until(async () =>
    (await pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      select count(*)::int as n from graphile_worker._private_jobs j join graphile_worker._private_tasks k on k.id = j.task_id
      where k.identifier like 'webhooks%' and j.attempts < j.max_attempts and (j.locked_at is not null or j.run_at <= now())`)) === 0,
    { message: "the webhook jobs to settle" },
  );
}

t.test("webhooks", async (t) => {
  const app = await startTestApp(t, { worker: true });
  const receiver = await startWebhookReceiver(t);
  const { user, token } = await buildUserWithToken(app.pool);
  // Every answer of the API in this test, for the final secret scan.
  const answers: string[] = [];
  const api = recordingClient(app.url, token, answers);
  const project = await buildProject(app.pool, user.id);
  const secrets = [secret];

  const created = await api.post(`/api/projects/${project}/webhooks`, { event_type: "code_generated", target_url: receiver.url, secret_key: secret });
  t.equal(created.status, 201, created.text);
  t.equal(created.body.webhook.has_secret_key, true, "the create answer says a secret is set");
  t.notOk("secret_key" in created.body.webhook, "and does not show it");
  t.notMatch(created.text, secret);
  const hookId = created.body.webhook.id;

  await t.test("the secret is never shown: read and list say has_secret_key", async (t) => {
    const shown = await api.get(`/api/webhooks/${hookId}`);
    t.equal(shown.body.webhook.has_secret_key, true);
    t.notOk("secret_key" in shown.body.webhook);
    const list = await api.get(`/api/projects/${project}/webhooks`);
    t.equal(list.body.webhooks.length, 1);
    t.equal(list.body.webhooks[0].has_secret_key, true);
    t.notOk("secret_key" in list.body.webhooks[0]);
  });

  await t.test("validation", async (t) => {
    const bad = await api.post(`/api/projects/${project}/webhooks`, { event_type: "scheduled", target_url: "ftp://example.com/x", secret_key: "short" });
    t.equal(bad.status, 422);
    t.ok(bad.body.errors.target_url);
    t.match(bad.body.errors.secret_key, [/16 to 256 printable ASCII characters/]);
    const missing = await api.post(`/api/projects/${project}/webhooks`, { event_type: "manual_trigger", target_url: receiver.url });
    t.equal(missing.status, 422, "the secret key is required");
    t.same(Object.keys(missing.body.errors), ["secret_key"]);
    t.match(missing.body.errors.secret_key, [/secret key field is required/]);
    for (const [why, value] of [
      ["too long", "k".repeat(257)],
      ["a control character", "0123456789abcdef\n"],
      ["a non-ASCII character", "0123456789abcdéf"],
      ["not a string", 1234567890123456],
      ["null", null],
    ] as const) {
      const res = await api.post(`/api/projects/${project}/webhooks`, { event_type: "manual_trigger", target_url: receiver.url, secret_key: value });
      t.equal(res.status, 422, why);
      t.match(res.body.errors?.secret_key, [/16 to 256 printable ASCII characters/], why);
    }
    const longest = await api.post(`/api/projects/${project}/webhooks`, { event_type: "manual_trigger", target_url: receiver.url, secret_key: "~ !".repeat(85) + "x", is_active: false });
    t.equal(longest.status, 201, "256 printable characters, spaces included, are accepted");
    t.equal((await api.delete(`/api/webhooks/${longest.body.webhook.id}`)).status, 200);
    const badUpdate = await api.put(`/api/webhooks/${hookId}`, { secret_key: "too-short" });
    t.equal(badUpdate.status, 422);
    t.ok(badUpdate.body.errors.secret_key);
    const withKey = { secret_key: secret };
    const noCron = await api.post(`/api/projects/${project}/webhooks`, { event_type: "scheduled", target_url: receiver.url, ...withKey });
    t.same(Object.keys(noCron.body.errors), ["cron"]);
    const badCron = await api.post(`/api/projects/${project}/webhooks`, { event_type: "scheduled", target_url: receiver.url, cron: "61 * * * *", ...withKey });
    t.match(badCron.body.errors.cron[0], /minute/);
    const sixFields = await api.post(`/api/projects/${project}/webhooks`, { event_type: "scheduled", target_url: receiver.url, cron: "* * * * * *", ...withKey });
    t.equal(sixFields.status, 422, "seconds are refused: the tick is a minute");
    const badZone = await api.post(`/api/projects/${project}/webhooks`, { event_type: "scheduled", target_url: receiver.url, cron: "0 * * * *", timezone: "Mars/Olympus", ...withKey });
    t.ok(badZone.body.errors.timezone);
    const cronElsewhere = await api.post(`/api/projects/${project}/webhooks`, { event_type: "manual_trigger", target_url: receiver.url, cron: "0 * * * *", ...withKey });
    t.ok(cronElsewhere.body.errors.cron);
    const creds = await api.post(`/api/projects/${project}/webhooks`, { event_type: "manual_trigger", target_url: "https://user:pw@example.com/h", ...withKey });
    t.ok(creds.body.errors.target_url);
    const count = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from webhooks`);
    t.equal(count, 1, "nothing was stored");
  });

  await t.test("a recorded CodeGenerated event is delivered promptly, signed", async (t) => {
    // The test worker runs no cron: a delivery at all is one that did not wait for the tick.
    const generation = await buildGeneration(app.pool, project, user.id, undefined, { withEvent: true });
    const [hook] = await receiver.waitFor(1);
    const payload = verifiedPayload(t, hook!, secret);
    t.same(Object.keys(payload), ["event", "project_id", "code_generation_id", "timestamp", "signature"]);
    t.match(payload, { event: "code_generated", project_id: project, code_generation_id: generation });
    t.ok(!Number.isNaN(Date.parse(payload.timestamp as string)), "ISO timestamp");
    t.equal(hook!.headers["x-webhook-event"], "code_generated");
    await until(async () =>
      app.pool.oneFirst(sql.type(z.object({ done: z.boolean() }))`select bool_and(processed_at is not null) as done from outbox_events where event_type = 'CodeGenerated'`),
      { message: "the event marked processed" },
    );
    await webhookJobsSettled(app.pool);
    t.equal(receiver.received.length, 1, "processed with one request to the receiver");
    const log = await api.get(`/api/webhooks/${hookId}/deliveries`);
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
    const deliveries = await until(async () => {
      const rows = await deliveriesOf(app.pool, hookId);
      return rows.at(-1)?.status === "succeeded" ? rows : undefined;
    }, { message: "the delivery to succeed" });
    t.match(deliveries.at(-1), { status: "succeeded", attempts: 2 });

    // The outbox is read again from the start (as after a crash before it was marked).
    await app.pool.query(sql.type(z.object({}))`update outbox_events set processed_at = null`);
    await app.pool.query(sql.type(z.object({}))`select graphile_worker.add_job('webhooks__dispatch', '{}'::json)`);
    await until(async () =>
      app.pool.oneFirst(sql.type(z.object({ done: z.boolean() }))`select bool_and(processed_at is not null) as done from outbox_events`),
      { message: "the replay to be processed" },
    );
    await webhookJobsSettled(app.pool);
    t.equal((await deliveriesOf(app.pool, hookId)).length, deliveries.length, "no new delivery");
    t.equal(receiver.received.length, before + 2, "no request twice");
  });

  await t.test("a receiver that is down (connection refused) gets the delivery once it is back on its port, signed, once", async (t) => {
    const down = await startWebhookReceiver(t);
    await down.stop();
    const other = await buildProject(app.pool, user.id);
    const hook = await api.post(`/api/projects/${other}/webhooks`, { event_type: "code_generated", target_url: down.url, secret_key: secret });
    t.equal(hook.status, 201, hook.text);
    const generation = await buildGeneration(app.pool, other, user.id, undefined, { withEvent: true });
    const delivery = await until(async () => (await deliveriesOf(app.pool, hook.body.webhook.id))[0], { message: "the delivery to be recorded" });
    for (const attempt of [1, 2]) {
      const failed = await until(async () => {
        const row = await deliveryState(app.pool, delivery.id);
        return row.attempts === attempt && row.status === "pending" ? row : undefined;
      }, { message: `refused attempt ${attempt}` });
      t.match(failed.error, /ECONNREFUSED/, `attempt ${attempt} found the port closed`);
      if (attempt === 1) await retryNow(app.pool, delivery.id, attempt);
    }
    t.equal(down.received.length, 0);
    await down.start();
    await retryNow(app.pool, delivery.id, 2);
    const [received] = await down.waitFor(1);
    t.match(verifiedPayload(t, received!, secret), { event: "code_generated", project_id: other, code_generation_id: generation });
    t.equal(received!.headers["x-webhook-delivery"], String(delivery.id));
    const done = await until(async () => {
      const row = await deliveryState(app.pool, delivery.id);
      return row.status === "succeeded" ? row : undefined;
    }, { message: "the delivery to succeed" });
    t.match(done, { attempts: 3, response_status: 200, error: null });
    await webhookJobsSettled(app.pool);
    t.equal(down.received.length, 1, "delivered once");
    t.equal((await deliveriesOf(app.pool, hook.body.webhook.id)).length, 1, "as one delivery");
  });

  await t.test("manual trigger; a secret rotated by PUT signs the next deliveries, and an omitted one is kept", async (t) => {
    const manual = await api.post(`/api/projects/${project}/webhooks`, { event_type: "manual_trigger", target_url: receiver.url, secret_key: secret });
    const id = manual.body.webhook.id;
    const triggered = async () => {
      const before = receiver.received.length;
      const res = await api.post(`/api/webhooks/${id}/trigger`, {});
      t.equal(res.status, 202, res.text);
      t.match(res.body.delivery, { event: "manual_trigger", status: "pending" });
      return (await receiver.waitFor(before + 1))[before]!;
    };
    const latest = await app.pool.oneFirst(sql.type(z.object({ id: z.number() }))`select max(id) as id from code_generations where project_id = ${project}`);
    t.match(verifiedPayload(t, await triggered(), secret), { event: "manual_trigger", project_id: project, code_generation_id: latest });

    const rotated = "whsec-Rotated-Secret-9876543210 ~";
    secrets.push(rotated);
    const put = await api.put(`/api/webhooks/${id}`, { secret_key: rotated });
    t.equal(put.status, 200, put.text);
    t.equal(put.body.webhook.has_secret_key, true);
    t.notOk("secret_key" in put.body.webhook, "the update does not echo the secret");
    const afterRotation = await triggered();
    verifiedPayload(t, afterRotation, rotated);
    t.notOk(verifyBody(afterRotation.body, secret), "the old secret no longer verifies");

    const renamed = await api.put(`/api/webhooks/${id}`, { target_url: `${receiver.url}?kept=1` });
    t.equal(renamed.status, 200, renamed.text);
    verifiedPayload(t, await triggered(), rotated);

    const foreign = await buildGeneration(app.pool, await buildProject(app.pool, user.id), user.id);
    const wrong = await api.post(`/api/webhooks/${id}/trigger`, { code_generation_id: foreign });
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
    await webhookJobsSettled(app.pool);
    t.same((await deliveriesOf(app.pool, id)).map((d) => d.source_key), ["scheduled:2024-01-08T08:30:00.000Z"], "one delivery for the tick");
    t.equal(receiver.received.length, before + 1, "one request to the receiver for three ticks");
  });

  await t.test("the secrets are stored sealed and appear in no response or row", async (t) => {
    t.ok(answers.length > 20, `${answers.length} answers recorded`);
    t.same(secrets.filter((s) => answers.some((answer) => answer.includes(s))), [], "no answer holds a secret, the create answers included");
    t.same(await findSecrets(app.pool, secrets), []);
  });
});

t.test("a webhook that keeps failing is deactivated", async (t) => {
  const app = await startTestApp(t, { worker: true, env: { WEBHOOK_MAX_ATTEMPTS: "1", WEBHOOK_DEACTIVATE_AFTER_FAILURES: "2" } });
  const receiver = await startWebhookReceiver(t);
  receiver.status = 500;
  const { user, token } = await buildUserWithToken(app.pool);
  const api = recordingClient(app.url, token, []);
  const project = await buildProject(app.pool, user.id);
  const created = await api.post(`/api/projects/${project}/webhooks`, { event_type: "manual_trigger", target_url: receiver.url, secret_key: secret });
  const id = created.body.webhook.id;
  for (let i = 1; i <= 2; i += 1) {
    t.equal((await api.post(`/api/webhooks/${id}/trigger`, {})).status, 202);
    await until(async () => (await deliveriesOf(app.pool, id)).filter((d) => d.status === "failed").length === i, { message: `failed delivery ${i}` });
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
