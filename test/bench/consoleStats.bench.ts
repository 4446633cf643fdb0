/**
 * Operator console statistics benchmark (issue "Start from any folder, fuzz every route, and
 * give operators a console", Benchmark; BENCHMARKS.md "Operator console stats"): `jobStats`,
 * the read behind `GET /admin/jobs/stats`, the console and `jobs:stats`, over a `jobs` table
 * of 1,000,000 records. Target: under 100 ms (the median of the reads; p99 shown too).
 *
 * The records are a week of a busy service: 5 kinds, finished ones spread over seven days
 * with 50,000 in the last hour (a fan-out burst), 2 % failed, plus 2,000 queued and 50
 * running. Seeded with one `insert … select generate_series` (the console's NOTIFY trigger is
 * off while seeding: nobody listens to a benchmark database), then analysed, as autovacuum
 * would after such a load. A second figure reads the queued jobs' page the console shows
 * beside the figures (`GET /admin/jobs?status=queued`, with its total).
 */
import { z } from "zod";
import { createPool, ignoredRow, sql } from "../../shared/db/pool.ts";
import { jobStats, listJobs } from "../../shared/jobs/console.ts";
import { benchDatabase, percentile } from "./support/db.ts";
import { limitFigure, report } from "./report.ts";

const RECORDS = Number(process.env.BENCH_JOB_RECORDS ?? 1_000_000);
const LAST_HOUR = Math.min(50_000, Math.floor(RECORDS / 20));
const QUEUED = 2_000;
const RUNNING = 50;
const READS = 30;

const db = await benchDatabase();
const pool = await createPool(db.url, { maxPoolSize: 6, statementTimeout: 600_000 });
try {
  const seeded = performance.now();
  await pool.query(sql.type(ignoredRow)`alter table jobs disable trigger jobs_announce_status`);
  const finished = RECORDS - QUEUED - RUNNING;
  // Record n: kind n % 5; the first LAST_HOUR finished within the hour, the rest over the week
  // before; every 50th failed with an error; each took 50 ms to 10 s.
  await pool.query(sql.type(ignoredRow)`
    insert into jobs (kind, status, max_attempts, attempts, payload, error, error_code, created_at, started_at, finished_at, updated_at)
    select (array['generations__run', 'archives__build', 'deployments__run', 'mail__send', 'store__index'])[n % 5 + 1],
      case when n % 50 = 0 then 'failed' else 'succeeded' end, 5, 1, jsonb_build_object('n', n),
      case when n % 50 = 0 then 'The remote host refused the upload.' end, case when n % 50 = 0 then 'remote_refused' end,
      f.at - d.took - interval '1 second', f.at - d.took, f.at, f.at
    from generate_series(1, ${finished}) as n,
      lateral (select case when n <= ${LAST_HOUR} then now() - random() * interval '59 minutes'
                           else now() - interval '1 hour' - random() * interval '6 days 23 hours' end as at) f,
      lateral (select make_interval(secs => 0.05 + (n % 997) / 100.0) as took) d`);
  await pool.query(sql.type(ignoredRow)`
    insert into jobs (kind, status, max_attempts, attempts, payload, created_at, started_at, updated_at)
    select (array['generations__run', 'archives__build', 'deployments__run', 'mail__send', 'store__index'])[n % 5 + 1],
      case when n <= ${RUNNING} then 'running' else 'queued' end, 5, case when n <= ${RUNNING} then 1 else 0 end,
      jsonb_build_object('n', n), now() - interval '1 minute', case when n <= ${RUNNING} then now() end, now()
    from generate_series(1, ${QUEUED + RUNNING}) as n`);
  await pool.query(sql.type(ignoredRow)`insert into worker_processes (id, hostname, pid, concurrency) values ('bench-1', 'bench', 1, 4), ('bench-2', 'bench', 2, 4)`);
  await pool.query(sql.type(ignoredRow)`alter table jobs enable trigger jobs_announce_status`);
  await pool.query(sql.type(ignoredRow)`vacuum analyze jobs`);
  const seedSeconds = (performance.now() - seeded) / 1000;
  const count = await pool.oneFirst(sql.type(z.object({ count: z.number() }))`select count(*)::int as count from jobs`);

  const time = async (fn: () => Promise<unknown>) => {
    const started = performance.now();
    await fn();
    return performance.now() - started;
  };
  const stats: number[] = [];
  const page: number[] = [];
  await jobStats(pool, 15_000); // first read: plans and caches
  for (let i = 0; i < READS; i += 1) {
    stats.push(await time(() => jobStats(pool, 15_000)));
    page.push(await time(() => listJobs(pool, { status: "queued", limit: 20, offset: 0 })));
  }
  stats.sort((a, b) => a - b);
  page.sort((a, b) => a - b);
  const figures = await jobStats(pool, 15_000);
  report(`Operator console over ${count.toLocaleString("en")} job records (seeded in ${seedSeconds.toFixed(0)} s)`, [
    limitFigure("console.stats", percentile(stats, 50), "ms", 100, null, `jobStats, median of ${READS} reads; ${figures.totals.finished_last_hour} finished in the last hour, ${figures.totals.queued} queued`),
    limitFigure("console.stats.p99", percentile(stats, 99), "ms", 100, null, "the slowest of the reads"),
    limitFigure("console.queued_page", percentile(page, 50), "ms", 100, null, "GET /admin/jobs?status=queued: 20 newest queued with the total, median"),
  ]);
} finally {
  await pool.end();
  await db.drop();
}
