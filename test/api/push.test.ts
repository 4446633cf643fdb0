import t from "tap";
import webpush from "web-push";
import { z } from "zod";
import { sql } from "../../shared/db/pool.ts";
import { notifyByPush } from "../../shared/notifications/notify.ts";
import { startTestApp } from "../support/app.ts";
import { buildUserWithToken } from "../support/factories.ts";
import { client, request } from "../support/http.ts";
import { startPushService } from "../support/peers/pushService.ts";
import { until } from "../support/wait.ts";

const vapid = webpush.generateVAPIDKeys();

t.test("push notifications", async (t) => {
  const app = await startTestApp(t, { worker: true, env: { VAPID_PUBLIC_KEY: vapid.publicKey, VAPID_PRIVATE_KEY: vapid.privateKey, VAPID_SUBJECT: "mailto:ops@example.test" } });
  const push = await startPushService(t);
  const me = await buildUserWithToken(app.pool);
  const api = client(app.url, me.token);
  const lastJob = () =>
    app.pool.maybeOne(sql.type(z.object({ id: z.number(), status: z.string(), result: z.unknown() }))`
      select id, status, result from jobs where kind = 'push__send' order by id desc limit 1`);
  const finished = async (after: number) =>
    until(async () => {
      const job = await lastJob();
      return job && job.id > after && (job.status === "succeeded" || job.status === "failed") ? job : undefined;
    }, { message: "the push job" });

  t.test("the VAPID public key is published", async (t) => {
    const res = await request(app.url, "GET", "/api/push/vapid-public-key");
    t.equal(res.status, 200);
    t.equal(res.body.public_key, vapid.publicKey);
  });

  t.test("subscribe validates the PushSubscription and keeps its keys sealed", async (t) => {
    t.equal((await request(app.url, "POST", "/api/push/subscribe", { body: push.subscription() })).status, 401);
    const bad = await api.post("/api/push/subscribe", { endpoint: "not a url", keys: { p256dh: "AAAA", auth: "short" } });
    t.equal(bad.status, 422);
    t.ok(bad.body.errors.endpoint && bad.body.errors["keys.p256dh"] && bad.body.errors["keys.auth"], JSON.stringify(bad.body.errors));
    const subscription = push.subscription();
    const ok = await api.post("/api/push/subscribe", subscription);
    t.equal(ok.status, 201, ok.text);
    const stored = await app.pool.one(sql.type(z.object({ keys_sealed: z.instanceof(Buffer) }))`select keys_sealed from push_subscriptions where id = ${ok.body.subscription.id as number}`);
    t.notOk(stored.keys_sealed.includes(Buffer.from(subscription.keys.auth)), "the auth secret is not stored in the clear");
    t.equal((await api.post("/api/push/unsubscribe", { endpoint: subscription.endpoint })).status, 200);
    t.equal((await api.post("/api/push/unsubscribe", { endpoint: subscription.endpoint })).status, 404);
  });

  t.test("an expiry past the year 9999 is refused with a 422 and stores nothing", async (t) => {
    const other = await buildUserWithToken(app.pool);
    const mine = client(app.url, other.token);
    const count = () => app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from push_subscriptions where user_id = ${other.user.id}`);
    // 5794499440710875 ms is in the year 185590: JavaScript writes it "+185590-…", which PostgreSQL does not read.
    const far = await mine.post("/api/push/subscribe", { ...push.subscription(), expirationTime: 5_794_499_440_710_875 });
    t.equal(far.status, 422, far.text);
    t.ok(far.body.errors.expirationTime, JSON.stringify(far.body.errors));
    t.equal(await count(), 0);
    const last = await mine.post("/api/push/subscribe", { ...push.subscription(), expirationTime: Date.parse("9999-12-31T23:59:59.999Z") });
    t.equal(last.status, 201, `the last instant of 9999 is taken: ${last.text}`);
    t.equal(last.body.subscription.expires_at, "9999-12-31T23:59:59.999Z");
    t.equal(await count(), 1);
  });

  t.test("a notification arrives aes128gcm-encrypted and VAPID-signed, and decrypts to its payload", async (t) => {
    const subscription = push.subscription();
    t.equal((await api.post("/api/push/subscribe", subscription)).status, 201);
    const before = (await lastJob())?.id ?? 0;
    await notifyByPush(app.pool, { userId: me.user.id, kind: "support_ticket_reply", title: "New reply", body: "Your ticket #7 has a reply.", url: "/support-tickets/7" });
    const job = await finished(before);
    t.equal(job.status, "succeeded", JSON.stringify(job));
    const message = push.received.at(-1)!;
    t.ok(message, "the push service received a message");
    t.equal(message.headers["content-encoding"], "aes128gcm");
    t.ok(message.vapidValid, "VAPID JWT verified");
    t.equal(message.vapidKey, vapid.publicKey);
    t.ok(Number(message.headers.ttl) > 0, "a TTL is set");
    t.same(JSON.parse(push.decrypt(message)), { kind: "support_ticket_reply", title: "New reply", body: "Your ticket #7 has a reply.", url: "/support-tickets/7" });
    t.notOk(message.body.includes(Buffer.from("New reply")), "not in the clear on the wire");
  });

  t.test("the user's settings are followed", async (t) => {
    t.equal((await api.put("/api/settings", { notifications: { message_posted: { push: false } } })).status, 200);
    const count = push.received.length;
    const before = (await lastJob())?.id ?? 0;
    await notifyByPush(app.pool, { userId: me.user.id, kind: "message_posted", title: "Message", body: "hello" });
    const job = await finished(before);
    t.same(job.result, { skipped: "user_choice" });
    t.equal(push.received.length, count, "nothing sent");
  });

  t.test("a disabled account is pushed nothing, as it is e-mailed nothing", async (t) => {
    const disabled = await buildUserWithToken(app.pool);
    t.equal((await client(app.url, disabled.token).post("/api/push/subscribe", push.subscription())).status, 201);
    await app.pool.query(sql.type(z.object({}))`update users set disabled_at = now() where id = ${disabled.user.id}`);
    const count = push.received.length;
    const before = (await lastJob())?.id ?? 0;
    await notifyByPush(app.pool, { userId: disabled.user.id, kind: "kanban_card_assigned", title: "Card assigned to you", body: "Someone assigned you to card #1." });
    const job = await finished(before);
    t.same(job.result, { skipped: "account_disabled" });
    t.equal(push.received.length, count, "nothing sent");
  });

  t.test("a subscription the push service answers 410 is removed; one answering 404 too", async (t) => {
    for (const status of [410, 404]) {
      const subscription = push.subscription();
      t.equal((await api.post("/api/push/subscribe", subscription)).status, 201);
      push.answer(subscription.endpoint, status);
      const before = (await lastJob())?.id ?? 0;
      await notifyByPush(app.pool, { userId: me.user.id, kind: "deployment_completed", title: "Deployed", body: "done" });
      await finished(before);
      const left = await app.pool.exists(sql.type(z.object({}))`select 1 from push_subscriptions where endpoint = ${subscription.endpoint}`);
      t.notOk(left, `answered ${status}: removed`);
    }
    const kept = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from push_subscriptions where user_id = ${me.user.id}`);
    t.equal(kept, 1, "the working subscription stays");
  });
});

t.test("without VAPID keys push is unavailable", async (t) => {
  const app = await startTestApp(t);
  const me = await buildUserWithToken(app.pool);
  const key = await request(app.url, "GET", "/api/push/vapid-public-key");
  t.equal(key.status, 503);
  t.equal(key.body.code, "push_unavailable");
  const push = await startPushService(t);
  t.equal((await client(app.url, me.token).post("/api/push/subscribe", push.subscription())).status, 503);
});
