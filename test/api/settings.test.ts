import t from "tap";
import { z } from "zod";
import { hashPassword } from "../../shared/auth/passwords.ts";
import { sql } from "../../shared/db/pool.ts";
import { startTestApp } from "../support/app.ts";
import { buildUser, buildUserWithToken } from "../support/factories.ts";
import { client, request } from "../support/http.ts";
import { spawnReady } from "../support/processes.ts";
import { until } from "../support/wait.ts";

t.test("settings", async (t) => {
  const app = await startTestApp(t);
  const admin = await buildUserWithToken(app.pool, { roles: ["admin"] });
  const me = await buildUserWithToken(app.pool);
  const asAdmin = client(app.url, admin.token);
  const asMe = client(app.url, me.token);
  // One second web process for the subtests that need another process's view of the settings.
  let second: Promise<string> | undefined;
  const secondUrl = () =>
    (second ??= spawnReady(t, "test/support/webProcess.ts", { DATABASE_URL: app.db.url, APP_URL: app.config.appUrl }).then(
      (other) => `http://127.0.0.1:${/ready (\d+)/.exec(other.output())![1]}`,
    ));

  t.test("GET|PUT /settings: language, theme and notification choices per kind and channel", async (t) => {
    t.equal((await request(app.url, "GET", "/api/settings")).status, 401);
    const first = await asMe.get("/api/settings");
    t.equal(first.status, 200);
    t.same(first.body.settings.notifications.message_posted, { email: false, push: true }, "messages: push only by default");
    t.same(first.body.settings.notifications.kanban_card_assigned, { email: true, push: true }, "direct events: both by default");
    const saved = await asMe.put("/api/settings", { language: "de", theme: "dark", notifications: { message_posted: { email: true }, deployment_completed: { push: false } } });
    t.equal(saved.status, 200, saved.text);
    t.equal(saved.body.settings.language, "de");
    t.equal(saved.body.settings.theme, "dark");
    t.same(saved.body.settings.notifications.message_posted, { email: true, push: true });
    const more = await asMe.put("/api/settings", { notifications: { message_posted: { push: false } } });
    t.same(more.body.settings.notifications.message_posted, { email: true, push: false }, "choices merge");
    t.same(more.body.settings.notifications.deployment_completed, { email: true, push: false });
    const bad = await asMe.put("/api/settings", { notifications: { weather: { email: true } }, theme: "neon" });
    t.equal(bad.status, 422);
    t.ok(bad.body.errors.theme, JSON.stringify(bad.body.errors));
    t.equal((await asMe.get("/api/user")).body.language, "de", "the user row follows");
  });

  t.test("GET|PUT /admin/settings: administrators only, upload limit within the ceiling, audited", async (t) => {
    t.equal((await asMe.get("/api/admin/settings")).status, 403);
    t.equal((await asMe.put("/api/admin/settings", { registration_open: false })).status, 403);
    t.equal((await asMe.post("/api/admin/cache/clear")).status, 403);
    const read = await asAdmin.get("/api/admin/settings");
    t.equal(read.status, 200);
    t.equal(read.body.settings.upload_limit_bytes, app.config.uploadLimitBytes);
    const over = await asAdmin.put("/api/admin/settings", { upload_limit_bytes: app.config.uploadLimitBytes + 1 });
    t.equal(over.status, 422);
    t.ok(over.body.errors.upload_limit_bytes);
    const ok = await asAdmin.put("/api/admin/settings", { upload_limit_bytes: 4096, payout_minimum_eur: 25.5, default_language: "de" });
    t.equal(ok.status, 200, ok.text);
    t.equal(ok.body.settings.upload_limit_bytes, 4096);
    t.equal(ok.body.settings.payout_minimum_eur, 25.5);
    const audit = await asAdmin.get("/api/admin/audit-log?action=settings.updated");
    t.equal(audit.body.data[0].after.upload_limit_bytes, 4096);
    t.equal(audit.body.data[0].before.upload_limit_bytes, app.config.uploadLimitBytes);
  });

  t.test("closed registration refuses sign-ups; the default language applies to new accounts", async (t) => {
    const open = await request(app.url, "POST", "/api/auth/register", { body: { name: "Neu", email: "neu@example.test", password: "long enough pass" } });
    t.equal(open.status, 201, open.text);
    t.equal(open.body.user.language, "de", "default language from the settings");
    t.equal((await asAdmin.put("/api/admin/settings", { registration_open: false })).status, 200);
    const closed = await request(app.url, "POST", "/api/auth/register", { body: { name: "Zu", email: "zu@example.test", password: "long enough pass" } });
    t.equal(closed.status, 403);
    t.equal(closed.body.code, "registration_closed");
    const exists = await app.pool.exists(sql.type(z.object({}))`select 1 from users where email = 'zu@example.test'`);
    t.notOk(exists, "nothing written");
    await asAdmin.put("/api/admin/settings", { registration_open: true });
  });

  t.test("maintenance mode: 503 for everyone but administrators, seen by a second web process at once", async (t) => {
    const b = await secondUrl();
    t.equal((await client(b, me.token).get("/api/settings")).status, 200, "the second process has read the settings (maintenance off)");

    const on = await asAdmin.put("/api/admin/settings", { maintenance: { enabled: true, message: "Back at noon.", retry_after_seconds: 600 } });
    t.equal(on.status, 200, on.text);
    // The second process caches the settings for a minute; only the NOTIFY makes it switch now.
    const seen = await until(async () => {
      const res = await client(b, me.token).get("/api/settings");
      return res.status === 503 ? res : undefined;
    }, { message: "the second process to enter maintenance", intervalMs: 10 });
    t.equal(seen.body.code, "maintenance");
    t.equal(seen.body.message, "Back at noon.");
    t.equal(seen.headers.get("retry-after"), "600");

    for (const base of [app.url, b]) {
      t.equal((await client(base, me.token).get("/api/projects")).status, 503, "a user is refused");
      t.equal((await request(base, "POST", "/api/auth/register", { body: { name: "X", email: "x@example.test", password: "long enough pass" } })).status, 503, "a public route is refused");
      t.equal((await client(base, admin.token).get("/api/projects")).status, 200, "an administrator is served");
      t.equal((await request(base, "GET", "/api/health")).status === 503, false, "health stays reachable");
    }
    const password = "admin password here";
    const adminWithPassword = await buildUser(app.pool, { roles: ["admin"], passwordHash: await hashPassword(password) });
    const login = await request(b, "POST", "/api/auth/login", { body: { email: adminWithPassword.email, password } });
    t.equal(login.status, 200, "an administrator can still sign in");

    t.equal((await asAdmin.put("/api/admin/settings", { maintenance: { enabled: false } })).status, 200);
    await until(async () => (await client(b, me.token).get("/api/projects")).status === 200, { message: "the second process to leave maintenance" });
    t.pass("maintenance over in both processes");
  });

  t.test("POST /admin/cache/clear makes every process re-read settings changed behind its back", async (t) => {
    const b = await secondUrl();
    t.equal((await client(b, me.token).get("/api/settings")).status, 200, "cached: maintenance off");
    // A change that announces nothing (the trigger is off), as if written by a tool that bypasses it.
    await app.pool.query(sql.type(z.object({}))`alter table global_settings disable trigger global_settings_announce`);
    await app.pool.query(sql.type(z.object({}))`update global_settings set maintenance_enabled = true`);
    await app.pool.query(sql.type(z.object({}))`alter table global_settings enable trigger global_settings_announce`);
    t.equal((await client(b, me.token).get("/api/settings")).status, 200, "still the cached settings");
    const cleared = await asAdmin.post("/api/admin/cache/clear");
    t.equal(cleared.status, 200, cleared.text);
    await until(async () => (await client(b, me.token).get("/api/settings")).status === 503, { message: "the second process to re-read" });
    t.pass("the second process re-read the settings");
    await app.pool.query(sql.type(z.object({}))`update global_settings set maintenance_enabled = false`);
  });
});
