import t from "tap";
import { z } from "zod";
import { hashPassword } from "../../shared/auth/passwords.ts";
import { sql } from "../../shared/db/pool.ts";
import { startTestApp } from "../support/app.ts";
import { buildUser, buildUserWithToken } from "../support/factories.ts";
import { request } from "../support/http.ts";
import { RateLimiter } from "../../shared/rateLimit.ts";
import { freshDatabase } from "../support/db.ts";
import { spawnReady } from "../support/processes.ts";
import { until } from "../support/wait.ts";

const limits = { RATE_LIMIT_PUBLIC_PER_HOUR: "10", RATE_LIMIT_USER_PER_HOUR: "12" };

t.test("rate limits hold across two web processes on one database", async (t) => {
  const a = await startTestApp(t, { env: limits });
  const other = await spawnReady(t, "test/support/webProcess.ts", { DATABASE_URL: a.db.url, APP_URL: a.config.appUrl, ...limits });
  const b = { url: `http://127.0.0.1:${/ready (\d+)/.exec(other.output())![1]}` };
  const { token } = await buildUserWithToken(a.pool);

  t.test("public routes: 10 an hour per IP, whichever process answers", async (t) => {
    const statuses: number[] = [];
    const remaining: number[] = [];
    for (let i = 0; i < 16; i += 1) {
      const res = await request(i % 2 ? b.url : a.url, "GET", "/api/realtime/config");
      statuses.push(res.status);
      t.equal(res.headers.get("x-ratelimit-limit"), "10", "limit header on every response");
      const reset = Number(res.headers.get("x-ratelimit-reset"));
      const now = Date.now() / 1000;
      t.ok(reset > now && reset <= now + 3600, "reset is the end of the hour's window, in Unix seconds");
      if (res.status === 200) remaining.push(Number(res.headers.get("x-ratelimit-remaining")));
      else {
        t.equal(res.status, 429);
        t.equal(res.body.code, "rate_limited");
        const retryAfter = Number(res.headers.get("retry-after"));
        t.ok(retryAfter > 0 && retryAfter <= 3600, "Retry-After within the window");
        t.equal(res.body.message, `Too many requests; try again in ${retryAfter} seconds.`, "the message says when");
      }
    }
    t.equal(statuses.filter((s) => s === 200).length, 10, "exactly the limit got through");
    t.same(statuses.slice(10), [429, 429, 429, 429, 429, 429]);
    t.equal(remaining.at(-1), 0);
  });

  t.test("bearer routes: 12 an hour per user, even in parallel over both processes", async (t) => {
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => request(i % 2 ? b.url : a.url, "GET", "/api/user", { token })),
    );
    const ok = results.filter((r) => r.status === 200).length;
    t.equal(ok, 12, "exactly the limit got through");
    t.equal(results.filter((r) => r.status === 429).length, 18);
    t.ok(results.every((r) => r.headers.get("x-ratelimit-limit") === "12"));

    // Another user's budget is their own: the first one's spent budget does not touch it.
    const other = await buildUserWithToken(a.pool);
    const first = await request(b.url, "GET", "/api/user", { token: other.token });
    t.equal(first.status, 200, "another user is served");
    t.equal(first.headers.get("x-ratelimit-remaining"), "11", "from a full budget of their own");
    t.equal((await request(a.url, "GET", "/api/user", { token })).status, 429, "while the first user stays limited");
  });

  t.test("health checks are not limited", async (t) => {
    for (let i = 0; i < 3; i += 1) t.equal((await request(a.url, "GET", "/api/health")).status, 200);
  });
});

t.test("failed logins: counted atomically per e-mail and address, and per e-mail across addresses", async (t) => {
  // Three attempts per (e-mail, IP) pair, four times as many per e-mail; client addresses
  // come from X-Forwarded-For, as behind a proxy.
  const app = await startTestApp(t, { env: { TRUST_PROXY: "true", LOGIN_MAX_ATTEMPTS: "3" } });
  const password = "the right password";
  const user = await buildUser(app.pool, { passwordHash: await hashPassword(password) });
  const login = (email: string, pass: string, ip: string) =>
    request(app.url, "POST", "/api/auth/login", { body: { email, password: pass }, headers: { "x-forwarded-for": ip } });

  t.test("parallel wrong passwords from one address: only the limit gets through", async (t) => {
    const results = await Promise.all(Array.from({ length: 10 }, () => login(user.email, "wrong password", "203.0.113.7")));
    t.equal(results.filter((r) => r.status === 422).length, 3, "exactly three were checked");
    const locked = results.filter((r) => r.status === 429);
    t.equal(locked.length, 7, "the rest were refused");
    t.ok(locked.every((r) => r.body.code === "too_many_attempts" && Number(r.headers.get("retry-after")) > 0));
    t.equal((await login(user.email, password, "203.0.113.7")).status, 429, "even the right password, from that address");
    const grant = await request(app.url, "POST", "/api/oauth/token", {
      body: { grant_type: "password", client_id: "test-client", client_secret: "test-client-secret-0123456789", username: user.email, password },
      headers: { "x-forwarded-for": "203.0.113.7" },
    });
    t.equal(grant.status, 429, `the password grant shares the count (${grant.text})`);
    t.equal(grant.body.error, "too_many_attempts");
    t.equal((await login(user.email, password, "203.0.113.8")).status, 200, "another address may still log in");
  });

  t.test("one e-mail from many addresses: slowed after four times the pair limit", async (t) => {
    const victim = await buildUser(app.pool, { passwordHash: await hashPassword(password) });
    const statuses: number[] = [];
    for (let i = 1; i <= 15; i += 1) statuses.push((await login(victim.email, "wrong password", `198.51.100.${i}`)).status);
    t.same(statuses, [...Array(12).fill(422), 429, 429, 429], "twelve guesses, then refused from every address");
    const other = await login(user.email, "wrong password", "198.51.100.99");
    t.equal(other.status, 422, "other accounts are not affected");

    const owner = await buildUser(app.pool, { passwordHash: await hashPassword(password) });
    for (let i = 1; i <= 11; i += 1) t.equal((await login(owner.email, "wrong password", `192.0.2.${i}`)).status, 422);
    t.equal((await login(owner.email, password, "192.0.2.50")).status, 200, "one attempt left: the owner logs in");
    t.equal((await login(owner.email, "wrong password", "192.0.2.51")).status, 422, "the success did not use up the last attempt");
    t.equal((await login(owner.email, "wrong password", "192.0.2.52")).status, 429);
  });
});

t.test("a lockout ends with its LOGIN_LOCKOUT_S window, and the next window counts afresh", async (t) => {
  const app = await startTestApp(t, { env: { LOGIN_MAX_ATTEMPTS: "2", LOGIN_LOCKOUT_S: "900" } });
  const password = "the right password";
  const user = await buildUser(app.pool, { passwordHash: await hashPassword(password) });
  const login = (pass: string) => request(app.url, "POST", "/api/auth/login", { body: { email: user.email, password: pass } });
  t.same([(await login("wrong")).status, (await login("wrong")).status], [422, 422]);
  const locked = await login(password);
  t.equal(locked.status, 429, "locked, the right password included");
  const retryAfter = Number(locked.headers.get("retry-after"));
  t.ok(retryAfter > 0 && retryAfter <= 900, `Retry-After within the window (${retryAfter} s)`);
  // The window passes: its counts now lie one LOGIN_LOCKOUT_S in the past (moved, not waited for).
  const moved = await app.pool.anyFirst(sql.type(z.object({ key: z.string() }))`
    update rate_limit_counters set window_start = window_start - make_interval(secs => 900) where key like 'login%' returning key`);
  t.ok(moved.length >= 2, "the pair and the e-mail were counted");
  t.equal((await login(password)).status, 200, "the lockout has ended");
  t.same([(await login("wrong")).status, (await login("wrong")).status, (await login(password)).status], [422, 422, 429], "a new window allows the limit again, then locks");
});

t.test("a request budget starts again with the next window", async (t) => {
  const db = await freshDatabase(t);
  // Ten-second windows instead of an hour, so the next one comes during the test.
  const limiter = new RateLimiter(db.pool, 10);
  const key = "test:window-reset";
  const spent = await until(async () => {
    const states = [await limiter.hit(key, 2), await limiter.hit(key, 2), await limiter.hit(key, 2)];
    // Start over in the next window if this one ended midway.
    return states.every((s) => s.resetAt.getTime() === states[0]!.resetAt.getTime()) && states[0]!.allowed ? states : null;
  }, { timeoutMs: 120_000, message: "three hits within one window" });
  t.same(spent.map((s) => s.allowed), [true, true, false], "the budget of two is spent");
  t.equal(spent[2]!.remaining, 0);
  const next = await until(async () => {
    const state = await limiter.hit(key, 2);
    return state.allowed ? state : null;
  }, { timeoutMs: 120_000, intervalMs: 250, message: "a hit allowed again" });
  t.ok(next.resetAt.getTime() > spent[0]!.resetAt.getTime(), "in a later window");
  t.equal(next.remaining, 1, "with the whole budget again");
  t.equal((await limiter.hit(key, 2)).allowed, true);
  t.equal((await limiter.hit(key, 2)).allowed, false, "and the same limit");
});
