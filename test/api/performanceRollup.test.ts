/**
 * Performance histograms written in batches per web process (api/performanceRollup.ts):
 * measures accepted by one process reach another process's percentile read within about a
 * second, and the histograms built batch by batch, merged across writes and processes, are
 * exactly what recomputing them from the raw measures gives.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../shared/db/pool.ts";
import { rebuildHistograms } from "../../shared/usage/performanceStore.ts";
import { startTestApp } from "../support/app.ts";
import { buildUserWithToken } from "../support/factories.ts";
import { client, request } from "../support/http.ts";
import { until } from "../support/wait.ts";

const histogramRow = z.object({ row: z.string() });

t.test("performance histograms: batched per process, merged exactly", async (t) => {
  const a = await startTestApp(t);
  const b = await startTestApp(t, { db: a.db, env: { APP_URL: a.config.appUrl } });
  const admin = await buildUserWithToken(a.pool, { roles: ["admin"] });
  const today = new Date().toISOString().slice(0, 10);
  const post = async (url: string, metrics: unknown[]) => {
    const res = await request(url, "POST", "/api/performance-metrics", { body: { metrics } });
    t.equal(res.status, 202, res.text);
  };
  const batch = (offset: number) =>
    Array.from({ length: 20 }, (_, i) => ({ name: i % 2 ? "LCP" : "INP", value: offset + i * 13.7, route: `/r${i % 3}`, device_class: ["mobile", "tablet", "desktop"][i % 3] }));

  // Several writes into the same histograms from both processes, so rows are merged.
  await post(b.url, batch(100));
  await b.deps.rollup.flush();
  await post(b.url, batch(100));
  await post(a.url, batch(2500));
  await a.deps.rollup.flush();
  await post(b.url, [{ name: "LCP", value: 0, route: "/r0", device_class: "mobile" }, ...batch(7)]);

  const lcpCount = async () => {
    const res = await client(a.url, admin.token).get("/api/admin/performance-metrics?name=LCP");
    t.equal(res.status, 200, res.text);
    return (res.body.data as { count: number }[]).reduce((sum, r) => sum + r.count, 0);
  };
  // B's last batch is written by its own timer; A's read sees it within about a second.
  await until(async () => (await lcpCount()) === 41, { timeoutMs: 60_000, message: "B's measures reach A's read" });

  const snapshot = () =>
    a.pool.anyFirst(sql.type(histogramRow)`
      select h::text as row from performance_histograms h where name <> 'server' order by device_class, day, name, route`);
  const built = await snapshot();
  t.ok(built.length > 0);
  await rebuildHistograms(a.pool, today, new Date(Date.now() + 86_400_000).toISOString().slice(0, 10));
  t.same(await snapshot(), built, "the batched histograms equal those recomputed from the raw measures");
});
