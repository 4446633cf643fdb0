/**
 * What operators read about the queue (the console at /admin/console, `GET /admin/jobs/stats`
 * and the CLI's `jobs:stats`, which share `jobStats`), and their one action on a job: retrying
 * a failed one.
 *
 * Glossary: depth = jobs queued per kind; throughput = jobs finished per five minutes over the
 * last hour; failure rate = failed / finished in the same window.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";
import type { jobStatuses} from "./records.ts";
import { jobColumns, jobRow, type JobRow } from "./records.ts";

const kindRow = z.object({ kind: z.string(), queued: z.number(), running: z.number() });
const bucketRow = z.object({ at: z.date(), succeeded: z.number(), failed: z.number() });
const workerRow = z.object({ id: z.string(), hostname: z.string(), pid: z.number(), concurrency: z.number().nullable(), started_at: z.date(), beat_at: z.date() });
const slowRow = jobRow.extend({ duration_ms: z.number() });

/** A worker process that beat recently. */
export type WorkerRow = z.infer<typeof workerRow>;

/** The console's figures. */
export interface JobStats {
  kinds: readonly z.infer<typeof kindRow>[];
  /** Twelve five-minute buckets, oldest first, ending now. */
  throughput: readonly { at: Date; succeeded: number; failed: number }[];
  totals: { queued: number; running: number; finished_last_hour: number; failed_last_hour: number; failure_rate: number };
  workers: readonly WorkerRow[];
  slowest: readonly (JobRow & { duration_ms: number })[];
  failed: readonly JobRow[];
}

/** Workers that beat within `staleAfterMs`. */
export async function liveWorkers(conn: CommonQueryMethods, staleAfterMs: number): Promise<readonly WorkerRow[]> {
  return conn.any(sql.type(workerRow)`
    select id, hostname, pid, concurrency, started_at, beat_at from worker_processes
    where beat_at > now() - make_interval(secs => ${staleAfterMs / 1000}) order by started_at`);
}

/**
 * Queue depth and running jobs per kind (the partial index of unfinished jobs), the last
 * hour's finished jobs by five minutes (the per-minute roll-up), the slowest of that hour (the
 * index by minute and duration) and the latest failures: each read touches only what it
 * shows, however many jobs are kept or the hour finished.
 */
export async function jobStats(conn: CommonQueryMethods, staleAfterMs: number): Promise<JobStats> {
  const [kinds, buckets, workers, slowest, failed] = await Promise.all([
    conn.any(sql.type(kindRow)`
      select kind, count(*) filter (where status = 'queued')::int as queued, count(*) filter (where status = 'running')::int as running
      from jobs where status in ('queued', 'running') group by kind order by kind`),
    // The hour's finished jobs from the per-minute roll-up kept by triggers on jobs
    // (sql/migrations/0105): a few hundred rows, however many jobs the hour finished. The
    // first bucket starts on a minute, so whole minutes make up every bucket.
    conn.any(sql.type(bucketRow)`
      with edges as (select date_bin('5 minutes', now(), 'epoch') - interval '55 minutes' as first),
      buckets as (select generate_series(first, first + interval '55 minutes', interval '5 minutes') as at from edges),
      counted as (
        select date_bin('5 minutes', c.minute, 'epoch') as at,
          coalesce(sum(c.count) filter (where c.status = 'succeeded'), 0)::int as succeeded,
          coalesce(sum(c.count) filter (where c.status = 'failed'), 0)::int as failed
        from job_finish_counts c, edges
        where c.minute >= edges.first
        group by 1
      )
      select b.at, coalesce(c.succeeded, 0) as succeeded, coalesce(c.failed, 0) as failed
      from buckets b left join counted c on c.at = b.at
      order by b.at`),
    liveWorkers(conn, staleAfterMs),
    // The ten longest of each minute of the hour from the index by minute and duration
    // (0105), plus any finished after this minute (a worker clock ahead of the database's);
    // the ten longest of those, then their rows by id: the table is visited ten times.
    conn.any(sql.type(slowRow)`
      with since as (select now() - interval '1 hour' as at),
      candidates as (
        select t.id, t.took from since,
          generate_series(date_bin('1 minute', since.at, 'epoch'), date_bin('1 minute', now(), 'epoch'), interval '1 minute') as m,
          lateral (
            select j.id, j.finished_at - j.started_at as took from jobs j
            where date_bin('1 minute', j.finished_at, 'epoch') = m and j.finished_at is not null and j.started_at is not null
              and j.finished_at > since.at
            order by j.finished_at - j.started_at desc limit 10
          ) t
        union all
        select id, finished_at - started_at from jobs
        where finished_at >= date_bin('1 minute', now(), 'epoch') + interval '1 minute' and started_at is not null
      ), slowest as (
        select id, took from candidates order by took desc limit 10
      )
      select ${jobColumns}, (extract(epoch from slowest.took) * 1000)::float8 as duration_ms
      from slowest join jobs using (id) order by slowest.took desc`),
    conn.any(sql.type(jobRow)`select ${jobColumns} from jobs where status = 'failed' order by finished_at desc limit 20`),
  ]);
  const finished = buckets.reduce((n, b) => n + b.succeeded + b.failed, 0);
  const failedCount = buckets.reduce((n, b) => n + b.failed, 0);
  return {
    kinds,
    throughput: buckets,
    totals: {
      queued: kinds.reduce((n, k) => n + k.queued, 0),
      running: kinds.reduce((n, k) => n + k.running, 0),
      finished_last_hour: finished,
      failed_last_hour: failedCount,
      failure_rate: finished ? failedCount / finished : 0,
    },
    workers,
    slowest,
    failed,
  };
}

/** Filters of the job list. */
export interface JobFilter {
  status?: (typeof jobStatuses)[number];
  kind?: string;
  limit: number;
  offset: number;
}

/** Jobs, newest first, with the total matching `filter`. */
export async function listJobs(conn: CommonQueryMethods, filter: JobFilter): Promise<{ rows: readonly JobRow[]; total: number }> {
  const where = sql.join(
    [sql.fragment`true`, ...(filter.status ? [sql.fragment`status = ${filter.status}`] : []), ...(filter.kind ? [sql.fragment`kind = ${filter.kind}`] : [])],
    sql.fragment` and `,
  );
  const [rows, total] = await Promise.all([
    conn.any(sql.type(jobRow)`select ${jobColumns} from jobs where ${where} order by id desc limit ${filter.limit} offset ${filter.offset}`),
    conn.oneFirst(sql.type(z.object({ count: z.number() }))`select count(*)::int as count from jobs where ${where}`),
  ]);
  return { rows, total };
}

/** Why a job cannot be retried, or null when it can. */
export type RetryRefusal = "not_found" | "not_failed" | "no_payload";

/**
 * Queues a failed job again under its own id (attempts start over, its error is kept until
 * it runs), as one statement; graphile-worker gets a fresh row under the job's key.
 */
export async function retryJob(conn: CommonQueryMethods, id: number): Promise<{ job: JobRow } | { refusal: RetryRefusal }> {
  const row = await conn.maybeOne(sql.type(jobRow.extend({ payload: z.unknown() }))`select ${jobColumns}, payload from jobs where id = ${id} for update`);
  if (!row) return { refusal: "not_found" };
  if (row.status !== "failed") return { refusal: "not_failed" };
  if (row.payload === null || row.payload === undefined) return { refusal: "no_payload" };
  const job = await conn.one(sql.type(jobRow)`
    with record as (
      update jobs set status = 'queued', attempts = 0, progress = 0, progress_message = null, started_at = null, finished_at = null, updated_at = now()
      where id = ${id} returning *
    ), queued as (
      select graphile_worker.add_job(
        identifier => record.kind,
        payload => json_build_object('job_id', record.id, 'payload', record.payload),
        max_attempts => record.max_attempts,
        job_key => 'job:' || record.id
      ) from record
    )
    select ${jobColumns} from record, queued`);
  return { job };
}
