/**
 * Jobs benchmark (issue "Foundation", BENCHMARKS.md "Jobs"):
 * - throughput of no-op jobs through our jobs layer (record + enqueue + run + complete)
 *   versus raw graphile-worker `addJob` + a no-op task, each enqueue one committed write;
 * - enqueue→start latency of our layer, p50 and p99 (jobs enqueued one at a time).
 * - bulk enqueue (issue "Performance, second round"): 10,000 jobs, records included, from one
 *   call of `enqueueMany` (one statement, one commit), against graphile-worker's `addJobs` of
 *   the same payloads without records.
 * Targets: throughput ratio ≥ 0.85, p50 < 10 ms, bulk ≥ 5,000 jobs/s.
 *
 * Each enqueue waits for its commit to reach the disk (fsync on), so both sides are bound by
 * the disk's flush time, which drifts by a factor of two within a minute on a shared machine:
 * the sides take turns over three rounds and the medians are compared.
 */
import { z } from "zod";
import { makeWorkerUtils, run, Logger } from "graphile-worker";
import { createPool } from "../../shared/db/pool.ts";
import { enqueue } from "../../shared/jobs/enqueue.ts";
import { enqueueMany } from "../../shared/jobs/enqueueMany.ts";
import { defineJobKind } from "../../shared/jobs/kind.ts";
import { createLogger } from "../../shared/logger.ts";
import { defineTask } from "../../workers/defineTask.ts";
import { startWorker } from "../../workers/index.ts";
import { testConfig } from "../support/app.ts";
import { benchDatabase, percentile } from "./support/db.ts";
import { floorFigure, limitFigure, ratioFigure, report } from "./report.ts";

const JOBS = Number(process.env.BENCH_JOBS ?? 1000);
const LATENCY_SAMPLES = 200;
const quiet = new Logger(() => () => {});

async function rawGraphile(url: string): Promise<number> {
  let done = 0;
  let finish: () => void = () => {};
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const runner = await run({
    connectionString: url,
    concurrency: 4,
    pollInterval: 1000,
    logger: quiet,
    noHandleSignals: true,
    taskList: {
      bench__raw: async () => {
        done += 1;
        if (done === JOBS) finish();
      },
    },
  });
  const utils = await makeWorkerUtils({ connectionString: url, logger: quiet });
  const started = performance.now();
  for (let i = 0; i < JOBS; i += 1) await utils.addJob("bench__raw", { i });
  await finished;
  const seconds = (performance.now() - started) / 1000;
  await utils.release();
  await runner.stop();
  return JOBS / seconds;
}

const ROUNDS = 3;
const BULK_JOBS = Number(process.env.BENCH_BULK_JOBS ?? 10_000);

/**
 * Jobs/s of one bulk enqueue of BULK_JOBS jobs, committed, by our layer (records + worker jobs)
 * and by graphile-worker's `addJobs` alone, medians of ROUNDS alternating rounds. No worker
 * runs: this is the enqueue alone.
 */
async function bulk(url: string): Promise<{ ours: number; raw: number }> {
  const pool = await createPool(url, { maxPoolSize: 2 });
  const utils = await makeWorkerUtils({ connectionString: url, logger: quiet });
  const kind = defineJobKind("bench__bulk", z.object({ i: z.number(), path: z.string() }), { maxAttempts: 1 });
  const payloads = Array.from({ length: BULK_JOBS }, (_, i) => ({ i, path: `src/models/table_${i}.ts` }));
  const ours: number[] = [];
  const raw: number[] = [];
  const time = async (fn: () => Promise<unknown>) => {
    const started = performance.now();
    await fn();
    return BULK_JOBS / ((performance.now() - started) / 1000);
  };
  try {
    for (let round = 0; round < ROUNDS; round += 1) {
      const rawRound = () => time(() => utils.addJobs(payloads.map((payload) => ({ identifier: "bench__bulk_raw", payload }))));
      if (round % 2 === 0) raw.push(await rawRound());
      ours.push(await time(() => enqueueMany(pool, kind, payloads)));
      if (round % 2 === 1) raw.push(await rawRound());
    }
  } finally {
    await utils.release();
    await pool.end();
  }
  return { ours: median(ours), raw: median(raw) };
}

async function ours(url: string, measureLatency: boolean): Promise<{ throughput: number; p50: number; p99: number }> {
  const config = testConfig(url, { WORKER_CONCURRENCY: "4", WORKER_POLL_INTERVAL_MS: "1000", WORKER_HEARTBEAT_MS: "5000" });
  const log = createLogger("silent");
  const pool = await createPool(url, { maxPoolSize: 10 });
  const kind = defineJobKind("bench__noop", z.object({ i: z.number() }), { maxAttempts: 1 });
  const startedAt = new Map<number, number>();
  let done = 0;
  let finish: () => void = () => {};
  let target = JOBS;
  let finished = new Promise<void>((resolve) => (finish = resolve));
  const task = defineTask(kind, async (_payload, ctx) => {
    startedAt.set(ctx.jobId!, performance.now());
    return null;
  });
  const worker = await startWorker({ config, pool, log }, { databaseUrl: url, extraTasks: [task], crontab: "" });
  // Count completions (record marked succeeded) through the job events the wrapper publishes.
  const { PgListener } = await import("../../shared/events/listener.ts");
  const listener = new PgListener(url, log);
  listener.subscribe("realtime", (payload) => {
    if (payload.includes('"JobCompleted"')) {
      done += 1;
      if (done === target) finish();
    }
  });
  await listener.start();

  const t0 = performance.now();
  for (let i = 0; i < JOBS; i += 1) await enqueue(pool, kind, { i });
  await finished;
  const throughput = JOBS / ((performance.now() - t0) / 1000);

  // Latency: one job at a time, from the enqueue's commit to the task's first line.
  const latencies: number[] = [];
  done = 0;
  target = 1;
  for (let i = 0; i < (measureLatency ? LATENCY_SAMPLES : 0); i += 1) {
    finished = new Promise<void>((resolve) => (finish = resolve));
    done = 0;
    const job = await enqueue(pool, kind, { i });
    const committed = performance.now();
    await finished;
    latencies.push(startedAt.get(job.id)! - committed);
  }
  latencies.sort((a, b) => a - b);
  await listener.stop();
  await worker.stop();
  await pool.end();
  return { throughput, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

function median(values: number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
}

const rawDb = await benchDatabase();
const ourDb = await benchDatabase();
const bulkDb = await benchDatabase();
try {
  const baselines: number[] = [];
  const throughputs: number[] = [];
  let measured = { throughput: 0, p50: NaN, p99: NaN };
  for (let round = 0; round < ROUNDS; round += 1) {
    // Alternate which side goes first, so neither always meets a warmer (or busier) disk.
    if (round % 2 === 0) baselines.push(await rawGraphile(rawDb.url));
    measured = await ours(ourDb.url, round === ROUNDS - 1);
    throughputs.push(measured.throughput);
    if (round % 2 === 1) baselines.push(await rawGraphile(rawDb.url));
  }
  const baseline = median(baselines);
  measured = { ...measured, throughput: median(throughputs) };
  const bulkRates = await bulk(bulkDb.url);
  report(`Jobs: ${JOBS} no-op jobs, each enqueue one committed write, 4 concurrent`, [
    ratioFigure("jobs.throughput", measured.throughput, baseline, "jobs/s", 0.85, `record + enqueue + run + complete vs raw addJob; medians of ${ROUNDS} alternating rounds`),
    limitFigure("jobs.enqueue_to_start.p50", measured.p50, "ms", 10),
    limitFigure("jobs.enqueue_to_start.p99", measured.p99, "ms", 50, null, "p99 has no target; shown for context"),
    floorFigure("jobs.bulk_enqueue", bulkRates.ours, "jobs/s", 5000, bulkRates.raw, `${BULK_JOBS} jobs, records included, one enqueueMany call; baseline graphile-worker addJobs without records; medians of ${ROUNDS} alternating rounds`),
  ]);
} finally {
  await rawDb.drop();
  await ourDb.drop();
  await bulkDb.drop();
}
