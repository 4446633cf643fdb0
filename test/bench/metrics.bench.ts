/**
 * Usage metrics benchmark (issue 19, BENCHMARKS.md "Performance-metrics ingestion"):
 * POST /api/performance-metrics with batches of 20 measures through the full stack versus a
 * bare Koa + pg handler inserting the same rows with one multi-row insert, 50 connections,
 * alternating runs (target ≥ 0.5× accepted measures per second); then
 * GET /api/admin/performance-metrics over 1,000,000 stored measures (target < 500 ms, the
 * median of five reads), read from their daily histograms.
 */
import { spawn } from "node:child_process";
import autocannon from "autocannon";
import { z } from "zod";
import { createPersonalToken } from "../../shared/auth/personalTokens.ts";
import { createPool, sql } from "../../shared/db/pool.ts";
import { insertUser } from "../../shared/db/users.ts";
import { rebuildHistograms } from "../../shared/usage/performanceStore.ts";
import { benchDatabase } from "./support/db.ts";
import { limitFigure, ratioFigure, report } from "./report.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = 2;
const BATCH = 20;
const STORED = 1_000_000;

const names = ["LCP", "INP", "CLS", "TTFB"];
const body = JSON.stringify({
  metrics: Array.from({ length: BATCH }, (_, i) => ({ name: names[i % 4], value: i % 4 === 2 ? 0.05 * i : 100 + 37 * i, route: `/projects/${i % 5}`, device_class: i % 3 ? "desktop" : "mobile" })),
});

async function load(url: string, seconds: number): Promise<number> {
  const result = await autocannon({ url, method: "POST", connections: 50, duration: seconds, pipelining: 1, headers: { "content-type": "application/json" }, body });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result.requests.average * BATCH;
}

const db = await benchDatabase();
const pool = await createPool(db.url);
const admin = await insertUser(pool, { name: "Bench Admin", username: "bench_admin", email: "admin@example.test", passwordHash: null, roles: ["admin"] });
const token = (await createPersonalToken(pool, admin.id, "bench")).plainText;

const child = spawn(process.execPath, [new URL("./support/metricsServers.ts", import.meta.url).pathname], { env: { ...process.env, DATABASE_URL: db.url }, stdio: ["ignore", "pipe", "inherit"] });
try {
  const [oursPort, barePort] = await new Promise<[number, number]>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /^ready (\d+) (\d+)$/m.exec(out);
      if (match) resolve([Number(match[1]), Number(match[2])]);
    });
    child.once("exit", (code) => reject(new Error(`server process exited with ${code}`)));
  });
  const oursUrl = `http://127.0.0.1:${oursPort}/api/performance-metrics`;
  const bareUrl = `http://127.0.0.1:${barePort}/`;
  await load(oursUrl, 1);
  await load(bareUrl, 1);
  const ours: number[] = [];
  const bare: number[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    bare.push(await load(bareUrl, SECONDS));
    ours.push(await load(oursUrl, SECONDS));
  }

  // A week of measures: 4 metrics × 25 routes × 3 device classes, spread over 7 days.
  await pool.query(sql.type(z.object({}))`truncate performance_measures, performance_histograms`);
  await pool.query(sql.type(z.object({}))`
    insert into performance_measures (recorded_at, name, value, route, device_class)
    select now() - (i % 604800) * interval '1 second', (array['LCP','INP','CLS','TTFB'])[1 + i % 4],
      case when i % 4 = 2 then random() else random() * 4000 end, '/route/' || (i % 25), (array['mobile','tablet','desktop'])[1 + i % 3]
    from generate_series(1, ${STORED}) i`);
  // Measures loaded by SQL (the API stamps every measure with the present) get their daily
  // histograms the way the migration backfills existing rows.
  await rebuildHistograms(pool, new Date(Date.now() - 9 * 86_400_000).toISOString().slice(0, 10), new Date(Date.now() + 86_400_000).toISOString().slice(0, 10));
  await pool.query(sql.type(z.object({}))`analyze performance_measures`);
  await pool.query(sql.type(z.object({}))`analyze performance_histograms`);
  const readUrl = `http://127.0.0.1:${oursPort}/api/admin/performance-metrics`;
  const times: number[] = [];
  for (let i = 0; i < 6; i += 1) {
    const started = performance.now();
    const res = await fetch(readUrl, { headers: { authorization: `Bearer ${token}` } });
    const json = (await res.json()) as { data: unknown[] };
    if (res.status !== 200 || json.data.length === 0) throw new Error(`read answered ${res.status}`);
    if (i > 0) times.push(performance.now() - started); // the first read warms the cache
  }
  times.sort((a, b) => a - b);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  report("Usage metrics: ingestion (batches of 20, 50 connections) and the percentile read", [
    ratioFigure("metrics.ingest", mean(ours), mean(bare), "measures/s", 0.5, "POST /api/performance-metrics vs bare Koa + pg multi-row insert"),
    limitFigure("metrics.percentiles_1m", times[Math.floor(times.length / 2)]!, "ms", 500, null, `GET /api/admin/performance-metrics over ${STORED.toLocaleString("en")} measures (7 days), median of 5`),
  ]);
} finally {
  child.kill("SIGKILL");
  await pool.end();
  await db.drop();
}
