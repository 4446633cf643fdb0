/**
 * The console's per-minute roll-up of finished jobs (sql/migrations/0105), kept by triggers
 * on `jobs`: through bulk inserts, status changes by several connections, moved finish
 * times, a retry and deletes, its counts stay equal to counting the jobs themselves, and
 * `jobStats` answers what counting the hour's jobs directly answers.
 */
import t from "tap";
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods } from "../../../shared/db/pool.ts";
import { jobStats, retryJob } from "../../../shared/jobs/console.ts";
import { freshDatabase } from "../../support/db.ts";

const minuteCount = z.object({ minute: z.date(), kind: z.string(), status: z.string(), count: z.number() });

/** The roll-up summed over connections, without empty minutes. */
const rolledUp = (conn: CommonQueryMethods) =>
  conn.any(sql.type(minuteCount)`
    select minute, kind, status, sum(count)::int as count from job_finish_counts
    group by 1, 2, 3 having sum(count) <> 0 order by 1, 2, 3`);

/** The same figures counted from the jobs of the last two hours. */
const counted = (conn: CommonQueryMethods) =>
  conn.any(sql.type(minuteCount)`
    select date_bin('1 minute', finished_at, 'epoch') as minute, kind, status, count(*)::int as count from jobs
    where status in ('succeeded', 'failed') and finished_at > now() - interval '2 hours'
    group by 1, 2, 3 order by 1, 2, 3`);

/** The hour's buckets counted from the jobs, as jobStats answered them before the roll-up. */
const bucketsFromJobs = (conn: CommonQueryMethods) =>
  conn.any(sql.type(z.object({ at: z.date(), succeeded: z.number(), failed: z.number() }))`
    with edges as (select date_bin('5 minutes', now(), 'epoch') - interval '55 minutes' as first),
    buckets as (select generate_series(first, first + interval '55 minutes', interval '5 minutes') as at from edges),
    counted as (
      select date_bin('5 minutes', j.finished_at, 'epoch') as at,
        count(*) filter (where j.status = 'succeeded')::int as succeeded, count(*) filter (where j.status = 'failed')::int as failed
      from jobs j, edges where j.finished_at >= edges.first and j.status in ('succeeded', 'failed') group by 1
    )
    select b.at, coalesce(c.succeeded, 0) as succeeded, coalesce(c.failed, 0) as failed
    from buckets b left join counted c on c.at = b.at order by b.at`);

t.test("the finished-jobs roll-up", async (t) => {
  const db = await freshDatabase(t);
  const { pool } = db;
  const same = async (what: string) => t.same(await rolledUp(pool), await counted(pool), what);

  // One statement: 300 jobs over the last 100 minutes, a tenth failed, some unfinished, some older than the roll-up keeps.
  await pool.query(sql.type(ignoredRow)`
    insert into jobs (kind, status, max_attempts, attempts, payload, started_at, finished_at)
    select (array['a__one', 'b__two', 'c__three'])[n % 3 + 1],
      case when n % 10 = 0 then 'failed' when n % 7 = 0 then 'running' else 'succeeded' end, 3, 1, '{}',
      now() - make_interval(mins => n / 3, secs => 5 + n % 40),
      case when n % 7 = 0 and n % 10 <> 0 then null else now() - make_interval(mins => n / 3) end
    from generate_series(1, 300) n`);
  await pool.query(sql.type(ignoredRow)`
    insert into jobs (kind, status, max_attempts, attempts, started_at, finished_at)
    values ('a__one', 'succeeded', 1, 1, now() - interval '3 hours 1 minute', now() - interval '3 hours')`);
  await same("a bulk insert is counted per minute, kind and status");

  // Running jobs finish on two connections at once, one fails; finished ones move in time or change kind.
  const running = await pool.anyFirst(sql.type(z.object({ id: z.number() }))`select id from jobs where status = 'running' order by id`);
  t.ok(running.length > 10, "running jobs to finish");
  const half = Math.floor(running.length / 2);
  await Promise.all([
    pool.query(sql.type(ignoredRow)`update jobs set status = 'succeeded', finished_at = now() where id = any(${sql.array(running.slice(0, half), "int8")})`),
    pool.transaction(async (tx) => {
      for (const id of running.slice(half)) await tx.query(sql.type(ignoredRow)`update jobs set status = 'failed', finished_at = now() where id = ${id}`);
    }),
  ]);
  await pool.query(sql.type(ignoredRow)`update jobs set finished_at = finished_at - interval '7 minutes' where kind = 'b__two' and status = 'succeeded'`);
  await pool.query(sql.type(ignoredRow)`update jobs set kind = 'd__four' where id in (select id from jobs where kind = 'c__three' and status = 'failed' limit 3)`);
  await pool.query(sql.type(ignoredRow)`update jobs set progress = 50 where status = 'succeeded'`);
  await same("status changes, moved finish times and kinds are counted where they are now");

  const failed = await pool.oneFirst(sql.type(z.object({ id: z.number() }))`select id from jobs where status = 'failed' and payload is not null order by id limit 1`);
  t.ok("job" in (await retryJob(pool, failed)), "a failed job retried");
  await pool.query(sql.type(ignoredRow)`delete from jobs where kind = 'a__one' and finished_at > now() - interval '20 minutes'`);
  await pool.query(sql.type(ignoredRow)`delete from jobs where finished_at < now() - interval '2 hours'`);
  await same("a retried job leaves the counts, deleted ones too");

  const stats = await jobStats(pool, 15_000);
  const direct = await bucketsFromJobs(pool);
  t.same(stats.throughput, direct, "jobStats gives the hour's buckets as counting the jobs does");
  t.equal(stats.totals.finished_last_hour, direct.reduce((n, b) => n + b.succeeded + b.failed, 0));
  t.ok(stats.totals.finished_last_hour > 100, "the hour has finished jobs");
});
