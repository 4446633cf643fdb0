/**
 * Crash recovery for graphile-worker. The open-source runner leaves a crashed worker's
 * jobs locked for four hours. Every worker process here records a heartbeat with the ids
 * of its graphile workers; every process also sweeps: it deletes the heartbeat rows that
 * stopped beating, hands their worker ids to `graphile_worker.force_unlock_workers`, and
 * nudges the idle workers, so a job whose worker died is retried within
 * `staleAfterMs + heartbeatMs + a poll` (about 20 s with the defaults).
 *
 * A job whose worker died on its last attempt is never run again; the sweep fails its record
 * (`worker_lost`) and announces it, so that no one waits for it forever.
 *
 * A process stalled longer than `staleAfterMs` (a blocked event loop) is taken for dead,
 * and its job may run twice; tasks are idempotent for exactly this reason.
 */
import os from "node:os";
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { ignoredRow, sql, type DatabasePool } from "../shared/db/pool.ts";
import { publishJobCompleted } from "../shared/jobs/events.ts";
import { failAbandoned } from "../shared/jobs/records.ts";
import type { Logger } from "../shared/logger.ts";

export interface HeartbeatOptions {
  pool: DatabasePool;
  log: Logger;
  intervalMs: number;
  staleAfterMs: number;
  /** Current graphile worker and pool ids of this process. */
  workerIds: () => string[];
  /** Jobs this process runs at once (shown in the operator console). */
  concurrency?: number;
}

export interface Heartbeat {
  processId: string;
  /** Runs one sweep now; returns the worker ids it unlocked. */
  sweep(): Promise<string[]>;
  stop(): Promise<void>;
}

/** Starts beating and sweeping; the first beat is written before this resolves. */
export async function startHeartbeat(options: HeartbeatOptions): Promise<Heartbeat> {
  const { pool, log } = options;
  const processId = `${os.hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
  await pool.query(sql.type(ignoredRow)`
    insert into worker_processes (id, hostname, pid, worker_ids, concurrency)
    values (${processId}, ${os.hostname()}, ${process.pid}, ${sql.array(options.workerIds(), "text")}, ${options.concurrency ?? null})`);

  const beat = async () => {
    await pool.query(sql.type(ignoredRow)`
      insert into worker_processes (id, hostname, pid, worker_ids, concurrency)
      values (${processId}, ${os.hostname()}, ${process.pid}, ${sql.array(options.workerIds(), "text")}, ${options.concurrency ?? null})
      on conflict (id) do update set beat_at = now(), worker_ids = excluded.worker_ids`);
  };

  const sweep = async (): Promise<string[]> => {
    const unlocked = await pool.oneFirst(sql.type(z.object({ ids: z.array(z.string()) }))`
      with dead as (
        delete from worker_processes
        where beat_at < now() - make_interval(secs => ${options.staleAfterMs / 1000})
        returning worker_ids
      ), ids as (
        select coalesce(array_agg(worker_id), '{}') as ids from dead, unnest(dead.worker_ids) as worker_id
      ), unlock as (
        select graphile_worker.force_unlock_workers(ids.ids) from ids
      )
      select ids.ids from ids, unlock`);
    if (unlocked.length) {
      log.warn({ workers: unlocked }, "unlocked the jobs of worker processes that stopped beating");
      await pool.query(sql.type(ignoredRow)`select pg_notify('jobs:insert', json_build_object('count', ${unlocked.length})::text)`);
    }
    await pool.transaction(async (tx) => {
      const abandoned = await failAbandoned(tx);
      for (const row of abandoned) await publishJobCompleted(tx, row);
      if (abandoned.length) log.warn({ jobs: abandoned.map((row) => row.id) }, "failed the jobs that stopped their worker on their last attempt");
    });
    return unlocked;
  };

  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    beat()
      .then(sweep)
      .catch((error: unknown) => log.warn({ err: error }, "heartbeat failed"))
      .finally(() => (running = false));
  }, options.intervalMs);
  timer.unref();

  return {
    processId,
    sweep,
    stop: async () => {
      clearInterval(timer);
      await pool.query(sql.type(ignoredRow)`delete from worker_processes where id = ${processId}`).catch(() => {});
    },
  };
}
