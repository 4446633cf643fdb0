import { createHash, randomBytes } from "node:crypto";
import t from "tap";
import { z } from "zod";
import { sql } from "../../shared/db/pool.ts";
import { createLogger } from "../../shared/logger.ts";
import { PostgresStorage } from "../../shared/storage/postgresStorage.ts";
import type { TaskContext } from "../../workers/context.ts";
import rollup from "../../workers/tasks/visits__rollup.ts";
import { startTestApp, type TestApp } from "../support/app.ts";
import { buildUserWithToken } from "../support/factories.ts";
import { client, request } from "../support/http.ts";

const count = (app: TestApp, table: "performance_measures" | "page_views") =>
  app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from ${sql.identifier([table])}`);

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

t.test("usage metrics", async (t) => {
  const app = await startTestApp(t, { env: { TRUST_PROXY: "true", VISITS_RETENTION_DAYS: "30" } });
  const admin = await buildUserWithToken(app.pool, { roles: ["admin"] });
  const user = await buildUserWithToken(app.pool);
  const asAdmin = client(app.url, admin.token);

  t.test("POST /performance-metrics validates and bounds a batch; nothing of a refused batch is written", async (t) => {
    const bad = await request(app.url, "POST", "/api/performance-metrics", {
      body: { metrics: [{ name: "LCP", value: 1200, route: "/a", device_class: "desktop" }, { name: "CLS", value: 250, route: "/a", device_class: "mobile" }, { name: "XYZ", value: 1, route: "a", device_class: "fridge" }] },
    });
    t.equal(bad.status, 422);
    t.ok(bad.body.errors["metrics.1.value"] && bad.body.errors["metrics.2.name"] && bad.body.errors["metrics.2.device_class"], JSON.stringify(bad.body.errors));
    const tooMany = Array.from({ length: 51 }, () => ({ name: "INP", value: 10, route: "/a", device_class: "mobile" }));
    t.equal((await request(app.url, "POST", "/api/performance-metrics", { body: { metrics: tooMany } })).status, 422);
    t.equal(await count(app, "performance_measures"), 0);
  });

  t.test("percentiles per day, metric and route, computed in SQL", async (t) => {
    // 1..100 ms of LCP on /a: p50 50.5, p75 75.25, p95 95.05 (linear interpolation).
    for (let start = 1; start <= 100; start += 20) {
      const metrics = Array.from({ length: 20 }, (_, i) => ({ name: "LCP", value: start + i, route: "/a", device_class: i % 2 ? "mobile" : "desktop" }));
      const res = await request(app.url, "POST", "/api/performance-metrics", { body: { metrics } });
      t.equal(res.status, 202);
      t.equal(res.body.accepted, 20);
    }
    await request(app.url, "POST", "/api/performance-metrics", { body: { metrics: [{ name: "CLS", value: 0.12, route: "/b", device_class: "tablet" }] } });
    t.equal((await client(app.url, user.token).get("/api/admin/performance-metrics")).status, 403);
    const res = await asAdmin.get("/api/admin/performance-metrics?name=LCP");
    t.equal(res.status, 200, res.text);
    t.same(res.body.data, [{ day: day(0), name: "LCP", route: "/a", count: 100, p50: 50.5, p75: 75.25, p95: 95.05 }]);
    const mobile = await asAdmin.get("/api/admin/performance-metrics?name=LCP&device_class=mobile");
    t.equal(mobile.body.data[0].count, 50);
    const cls = await asAdmin.get("/api/admin/performance-metrics?route=/b");
    t.equal(cls.body.data[0].p95, 0.12);
    t.equal((await asAdmin.get(`/api/admin/performance-metrics?from=${day(1)}&to=${day(0)}`)).status, 422, "an empty range");
    const yearZero = await asAdmin.get("/api/admin/performance-metrics?from=0000-01-01&to=0000-01-02");
    t.match(yearZero.body, { code: "validation_failed", errors: { from: [/before the year 0001/], to: [/before the year 0001/] } }, "a range in the year 0000, which PostgreSQL has not");
  });

  t.test("the server's own request timings are recorded per route", async (t) => {
    await app.deps.timings.flush();
    for (let i = 0; i < 3; i += 1) await client(app.url, user.token).get("/api/settings");
    await app.deps.timings.flush();
    const res = await asAdmin.get("/api/admin/performance-metrics?name=server&route=GET /api/settings");
    t.equal(res.status, 200);
    t.equal(res.body.data[0]?.count, 3, JSON.stringify(res.body));
    t.ok(res.body.data[0].p50 > 0);
  });

  const ip = "203.0.113.77";
  const agent = "UniqueAgent/9.9 (privacy-probe-4711)";
  const visit = (headers: Record<string, string>, body: unknown) => request(app.url, "POST", "/api/visits", { body, headers: { "x-forwarded-for": ip, "user-agent": agent, ...headers } });

  t.test("visits: DNT and GPC are honoured; no address, user agent or raw identifier is stored anywhere", async (t) => {
    const dnt = await visit({ dnt: "1" }, { path: "/pricing", referrer: null });
    t.equal(dnt.status, 202);
    t.equal(dnt.body.counted, false);
    t.equal((await visit({ "sec-gpc": "1" }, { path: "/pricing" })).body.counted, false);
    t.equal(await count(app, "page_views"), 0, "neither was stored");

    for (const path of ["/pricing?email=someone@example.test", "/pricing#top", "/docs"]) {
      const res = await visit({}, { path, referrer: "https://news.example.org/item?id=42&user=me" });
      t.equal(res.body.counted, true);
    }
    await request(app.url, "POST", "/api/visits", { body: { path: "/docs" }, headers: { "x-forwarded-for": "198.51.100.9", "user-agent": "Other/1.0" } });
    t.equal(await count(app, "page_views"), 4);

    const tables = await app.pool.anyFirst(sql.type(z.object({ name: z.string() }))`
      select quote_ident(schemaname) || '.' || quote_ident(tablename) as name from pg_tables where schemaname in ('public', 'graphile_worker')`);
    const dump: string[] = [];
    for (const table of tables) {
      const rows = await app.pool.anyFirst(sql.type(z.object({ row: z.string() }))`select t::text as row from ${sql.identifier(table.split(".").map((p) => p.replace(/"/g, "")))} t`);
      dump.push(...rows);
    }
    const everything = dump.join("\n").toLowerCase();
    const rawId = createHash("sha256").update(`${ip}\n${agent}`).digest("hex");
    for (const needle of [ip, "198.51.100.9", agent.toLowerCase(), "privacy-probe-4711", rawId, rawId.slice(0, 32), "someone@example.test", "user=me"]) {
      t.notOk(everything.includes(needle.toLowerCase()), `${needle} is stored nowhere (${tables.length} tables scanned)`);
    }
    const report = await asAdmin.get(`/api/admin/visits?from=${day(0)}&to=${day(0)}`);
    t.equal(report.status, 200, report.text);
    t.same(report.body.data[0], {
      day: day(0),
      visitors: 2,
      views: 4,
      top_paths: [{ path: "/docs", views: 2, visitors: 2 }, { path: "/pricing", views: 2, visitors: 1 }],
      top_referrers: [{ host: "news.example.org", views: 3 }],
    });
    t.equal((await client(app.url, user.token).get("/api/admin/visits")).status, 403);
  });

  t.test("the roll-up job folds raw rows past retention into days, split at the day boundary, and keeps the rest raw", async (t) => {
    const a = randomBytes(16);
    const b = randomBytes(16);
    const rows: [string, Buffer, string, string | null][] = [
      [day(-32), a, "/x", "ref.example"],
      [day(-32), a, "/x", null],
      [day(-32), b, "/y", "ref.example"],
      [day(-31), a, "/x", null],
      [day(-30), b, "/z", null],
    ];
    for (const [d, v, p, r] of rows) {
      await app.pool.query(sql.type(z.object({}))`insert into page_views (day, visitor, path, referrer_host, created_at) values (${d}::date, ${sql.binary(v)}, ${p}, ${r}, ${`${d}T23:59:59Z`}::timestamptz)`);
    }
    await app.pool.query(sql.type(z.object({}))`insert into visit_salts (day, salt) values (${day(-1)}::date, ${sql.binary(randomBytes(32))})`);
    const before = await asAdmin.get(`/api/admin/visits?from=${day(-33)}&to=${day(-29)}`);
    const log = createLogger("silent");
    const ctx: TaskContext = { deps: { config: app.config, pool: app.pool, pgPool: app.db.pgPool, log, storage: new PostgresStorage(app.pool) }, jobId: null, attempt: 1, maxAttempts: 1, log, signal: new AbortController().signal, progress: async () => {} };
    const result = (await rollup.run({}, ctx)) as { rolled_up: number };
    t.equal(result.rolled_up, 4, "the two days before the cutoff");
    const days = await app.pool.any(sql.type(z.object({ day: z.string(), visitors: z.number(), views: z.number() }))`
      select to_char(day, 'YYYY-MM-DD') as day, visitors, views from visit_days order by day`);
    t.same(days, [{ day: day(-32), visitors: 2, views: 3 }, { day: day(-31), visitors: 1, views: 1 }]);
    const raw = await app.pool.anyFirst(sql.type(z.object({ day: z.string() }))`select to_char(day, 'YYYY-MM-DD') as day from page_views where day < current_date order by day`);
    t.same(raw, [day(-30)], "the day at the cutoff stays raw");
    const salts = await app.pool.anyFirst(sql.type(z.object({ day: z.string() }))`select to_char(day, 'YYYY-MM-DD') as day from visit_salts order by day`);
    t.same(salts, [day(0)], "only today's salt is left");
    const after = await asAdmin.get(`/api/admin/visits?from=${day(-33)}&to=${day(-29)}`);
    t.same(after.body, before.body, "the report reads the same from the roll-up");
    t.equal(((await rollup.run({}, ctx)) as { rolled_up: number }).rolled_up, 0, "a second run changes nothing");
    t.same(await app.pool.any(sql.type(z.object({ views: z.number() }))`select views from visit_days order by day`), [{ views: 3 }, { views: 1 }]);
  });
});
