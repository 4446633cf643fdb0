/**
 * The worker process: graphile-worker running our task definitions with our job-record
 * lifecycle, the crontab, and the heartbeat/sweeper that recovers jobs of crashed workers.
 * Any number of worker processes may run against one database.
 */
import { EventEmitter } from "node:events";
import { Logger as WorkerLogger, run, type TaskList, type WorkerEvents } from "graphile-worker";
import pg from "pg";
import { ignoredRow, sql } from "../shared/db/pool.ts";
import type { Logger } from "../shared/logger.ts";
import { PostgresStorage } from "../shared/storage/postgresStorage.ts";
import type { WorkerDeps } from "./context.ts";
import { crontab } from "./crontab.ts";
import { wrapTask, type TaskDefinition } from "./defineTask.ts";
import { startHeartbeat, type Heartbeat } from "./heartbeat.ts";
import { superviseRunner, type SupervisedRunner } from "./supervisedRunner.ts";
import { loadTaskDefinitions } from "./taskList.ts";

export interface WorkerOptions {
  /** Connection URL for graphile-worker's own pool. */
  databaseUrl: string;
  /** Extra task definitions (tests, benchmarks). */
  extraTasks?: TaskDefinition[];
  /** Replace the crontab (tests pass an empty one). */
  crontab?: string;
}

export interface RunningWorker {
  /** graphile-worker's runner, started again should it end on its own. */
  runner: SupervisedRunner;
  heartbeat: Heartbeat;
  /** Stops taking jobs, waits for running ones (up to the shutdown timeout), then stops. */
  stop(): Promise<void>;
}

/** Adapts graphile-worker's logger to pino. */
function workerLogger(log: Logger): WorkerLogger {
  return new WorkerLogger((scope) => (level, message, meta) => {
    const child = log.child({ component: "graphile-worker", ...scope, ...meta });
    if (level === "error") child.error(message);
    else if (level === "warning") child.warn(message);
    else child.debug(message);
  });
}

/**
 * graphile-worker's connection pool, owned here rather than by graphile-worker: a pool it
 * makes itself is ended without being awaited when the runner stops, after its error
 * listeners are removed, so a connection the server closed in that window (the embedded
 * server stopping next, or a terminated backend) raised an unhandled 'error' and the
 * process exited 1 on SIGTERM. These listeners stay for the pool's life, and stop() awaits
 * the end of every connection.
 */
function workerPool(connectionString: string, max: number, log: Logger): pg.Pool {
  const pool = new pg.Pool({ connectionString, max });
  pool.on("error", (error) => log.warn({ err: error }, "an idle job-queue database connection failed"));
  pool.on("connect", (client) => client.on("error", (error) => log.warn({ err: error }, "a job-queue database connection failed")));
  return pool;
}

/** Starts a worker in this process. */
export async function startWorker(base: Omit<WorkerDeps, "storage" | "pgPool">, options: WorkerOptions): Promise<RunningWorker> {
  const { concurrency, pollIntervalMs, heartbeatMs, staleAfterMs } = base.config.worker;
  const pgPool = workerPool(options.databaseUrl, Math.max(concurrency + 2, 4), base.log);
  const deps: WorkerDeps = { ...base, pgPool, storage: new PostgresStorage(base.pool) };
  const definitions = [...(await loadTaskDefinitions()), ...(options.extraTasks ?? [])];
  const taskList: TaskList = {};
  for (const definition of definitions) taskList[definition.kind.name] = wrapTask(definition, deps);

  const runner = await superviseRunner({
    log: deps.log,
    start: (ids) => {
      const events: WorkerEvents = new EventEmitter() as WorkerEvents;
      events.on("pool:create", ({ workerPool }) => ids.add(workerPool.id));
      events.on("worker:create", ({ worker }) => ids.add(worker.workerId));
      return run({
        pgPool,
        concurrency,
        pollInterval: pollIntervalMs,
        taskList,
        crontab: options.crontab ?? crontab,
        logger: workerLogger(deps.log),
        events,
        noHandleSignals: true,
        gracefulShutdownAbortTimeout: deps.config.shutdownTimeoutMs,
        // Completions and failures that come in the same tick are written in one statement (one
        // commit) instead of one each (docs/perf/README.md). A release that fails (the database
        // went away) ends the runner, which superviseRunner starts again once the jobs it held
        // are unlocked; a failure released one at a time would instead be an unhandled
        // rejection that ends the process. A job whose record already says it finished is
        // skipped when it runs again. graphile-worker's local queue (batched fetches) was tried
        // too: no fewer commits in the jobs benchmark's one-at-a-time arrivals, and a slower
        // enqueue→start in most runs.
        preset: { worker: { completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
      });
    },
    unlock: async (ids) => {
      await deps.pool.query(sql.type(ignoredRow)`select graphile_worker.force_unlock_workers(${sql.array(ids, "text")})`);
    },
  });
  const heartbeat = await startHeartbeat({
    pool: deps.pool,
    log: deps.log,
    intervalMs: heartbeatMs,
    staleAfterMs,
    workerIds: () => runner.ids(),
    concurrency: deps.config.worker.concurrency,
  });
  deps.log.info({ concurrency, tasks: Object.keys(taskList) }, "worker started");

  let stopping: Promise<void> | undefined;
  return {
    runner,
    heartbeat,
    stop: () =>
      (stopping ??= (async () => {
        await runner.stop();
        await heartbeat.stop();
        await pgPool.end();
      })()),
  };
}
