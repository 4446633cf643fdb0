/**
 * Worker-scaling benchmark (BENCHMARKS.md "Jobs: worker scaling"): the same batch of
 * execution-bound jobs run by 1 worker process, then by 2, in alternating rounds of one
 * run. Each worker is the real runner (`startWorker`) in its own OS process with
 * WORKER_CONCURRENCY 1; each job does a fixed amount of CPU work (see support/busyTask.ts)
 * calibrated to BENCH_BUSY_MS (default 10 ms) on this machine before the rounds.
 *
 * A round enqueues JOBS jobs through our enqueue layer in one transaction (so the enqueue
 * commit is not what is timed) and measures the wall time from its commit until every job
 * record of the round is `succeeded`. Worker start-up is outside the clock: the processes
 * are up and idle before the jobs are committed. Target: 2 processes ≥ 1.6× the jobs/s of
 * 1. PostgreSQL shares the machine's cores with the workers, as it does here.
 */
import { spawn, type ChildProcessByStdio } from "node:child_process";
import { cpus } from "node:os";
import type { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import { createPool, sql, type DatabasePool } from "../../shared/db/pool.ts";
import { enqueue } from "../../shared/jobs/enqueue.ts";
import { busyKind, calibrate } from "./support/busyTask.ts";
import { benchDatabase } from "./support/db.ts";
import { ratioFigure, report } from "./report.ts";
import { profileFlags } from "./support/profile.ts";

const JOBS = Number(process.env.BENCH_JOBS ?? 400);
const BUSY_MS = Number(process.env.BENCH_BUSY_MS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ROUND_TIMEOUT_MS = 120_000;

type WorkerChild = ChildProcessByStdio<null, Readable, Readable>;

/** Spawns a benchmark worker process and waits for its "ready" line. */
async function spawnWorker(url: string): Promise<WorkerChild> {
  const child = spawn(process.execPath, [...profileFlags(), new URL("./support/workerProcess.ts", import.meta.url).pathname], {
    env: { ...process.env, DATABASE_URL: url, WORKER_CONCURRENCY: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker not ready after 120 s:\n${output}`)), 120_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (!/^ready/m.test(output)) return;
      // The worker's log follows; collecting and rescanning it would load this process.
      child.stdout.off("data", onData);
      child.stdout.resume();
      clearTimeout(timer);
      resolve();
    };
    child.stdout.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`worker exited (${code}) before it was ready:\n${output}`));
    });
  });
  return child;
}

async function stopWorker(child: WorkerChild): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

const roundCounts = z.object({ succeeded: z.number(), other_finished: z.number(), processes: z.number() });

/** Runs one round with `processes` workers; returns jobs/s and how the jobs were split. */
async function round(pool: DatabasePool, url: string, processes: number, iterations: number): Promise<{ rate: number; split: number[] }> {
  const workers = await Promise.all(Array.from({ length: processes }, () => spawnWorker(url)));
  try {
    const ids = await pool.transaction(async (tx) => {
      const rows = [];
      for (let i = 0; i < JOBS; i += 1) rows.push(await enqueue(tx, busyKind, { iterations }));
      return rows.map((row) => row.id);
    });
    const committed = performance.now();
    const first = ids[0]!;
    const last = ids[ids.length - 1]!;
    for (;;) {
      const counts = await pool.one(sql.type(roundCounts)`
        select count(*) filter (where status = 'succeeded')::int as succeeded,
               count(*) filter (where status in ('failed', 'cancelled'))::int as other_finished,
               count(distinct (result->>'pid')) filter (where status = 'succeeded')::int as processes
        from jobs where id between ${first} and ${last}`);
      if (counts.other_finished > 0) throw new Error(`${counts.other_finished} jobs did not succeed`);
      if (counts.succeeded === JOBS) break;
      if (performance.now() - committed > ROUND_TIMEOUT_MS) throw new Error(`only ${counts.succeeded}/${JOBS} jobs done after ${ROUND_TIMEOUT_MS} ms`);
      await sleep(10);
    }
    const seconds = (performance.now() - committed) / 1000;
    const split = await pool.manyFirst(sql.type(z.object({ n: z.number() }))`
      select count(*)::int as n from jobs where id between ${first} and ${last} group by result->>'pid' order by n desc`);
    return { rate: JOBS / seconds, split: [...split] };
  } finally {
    await Promise.all(workers.map(stopWorker));
  }
}

const db = await benchDatabase();
const pool = await createPool(db.url, { maxPoolSize: 4 });
try {
  const iterations = calibrate(BUSY_MS);
  // One unmeasured round each way: first-run costs (JIT, caches, table growth) fall here.
  await round(pool, db.url, 1, iterations);
  await round(pool, db.url, 2, iterations);
  const one: number[] = [];
  const two: number[] = [];
  const splits: string[] = [];
  for (let r = 0; r < ROUNDS; r += 1) {
    one.push((await round(pool, db.url, 1, iterations)).rate);
    const paired = await round(pool, db.url, 2, iterations);
    two.push(paired.rate);
    splits.push(paired.split.join("/"));
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const perRound = one.map((rate, i) => `${Math.round(rate)}→${Math.round(two[i]!)}`).join(", ");
  report(`Jobs: worker scaling, ${JOBS} jobs of ~${BUSY_MS} ms fixed CPU work, concurrency 1 per process, ${cpus().length} cores shared with PostgreSQL`, [
    ratioFigure(
      "jobs.worker_scaling",
      mean(two),
      mean(one),
      "jobs/s",
      1.6,
      `2 processes vs 1; CPU-bound fixed work (${iterations} loop iterations); rounds 1→2 proc jobs/s: ${perRound}; 2-proc split ${splits.join(", ")}`,
    ),
  ]);
} finally {
  await pool.end();
  await db.drop();
}
