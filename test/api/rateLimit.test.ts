import t from "tap";
import { startTestApp } from "../support/app.ts";
import { buildUserWithToken } from "../support/factories.ts";
import { request } from "../support/http.ts";
import { spawnReady } from "../support/processes.ts";

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
      t.ok(Number(res.headers.get("x-ratelimit-reset")) > Date.now() / 1000, "reset is a future Unix time");
      if (res.status === 200) remaining.push(Number(res.headers.get("x-ratelimit-remaining")));
      else {
        t.equal(res.status, 429);
        t.equal(res.body.code, "rate_limited");
        t.ok(Number(res.headers.get("retry-after")) > 0);
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
  });

  t.test("health checks are not limited", async (t) => {
    for (let i = 0; i < 3; i += 1) t.equal((await request(a.url, "GET", "/api/health")).status, 200);
  });
});
