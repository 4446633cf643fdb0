/**
 * What a task receives besides its payload: the shared resources of the worker process
 * and the handles of its own job (progress, abort signal, attempt number).
 */
import type pg from "pg";
import type { Config } from "../shared/config.ts";
import type { DatabasePool } from "../shared/db/pool.ts";
import type { Logger } from "../shared/logger.ts";
import type { Storage } from "../shared/storage/storage.ts";

/** Resources of a worker process, shared by all its tasks. */
export interface WorkerDeps {
  config: Config;
  pool: DatabasePool;
  /** The job queue's plain `pg` pool, also for what Slonik cannot do (a binary COPY). */
  pgPool: pg.Pool;
  log: Logger;
  storage: Storage;
}

export interface TaskContext {
  deps: WorkerDeps;
  /** Our job record's id; null for scheduled (cron) runs, which have no record. */
  jobId: number | null;
  /** 1-based attempt number. */
  attempt: number;
  maxAttempts: number;
  log: Logger;
  /** Aborted when the worker shuts down; long tasks should stop and let the job be retried. */
  signal: AbortSignal;
  /** Records progress (0–100) and publishes `JobProgress`. */
  progress(percent: number, message?: string): Promise<void>;
}
