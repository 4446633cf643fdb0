/**
 * graphile-worker's runner, started again when it ends on its own. A runner ends itself when it
 * cannot release a job (complete or fail it: the database went away at that moment), when its
 * workers fail to fetch jobs many times in a row, or when its cron cannot schedule. Left alone,
 * the process would go on beating its heartbeat while running nothing, and the jobs its workers
 * had locked would stay locked (graphile-worker frees them after four hours; the sweep of
 * workers/heartbeat.ts only frees those of processes that stopped beating). Here the ended
 * runner's jobs are unlocked once the database answers, then a new runner starts, after a
 * back-off that doubles while restarts keep failing and starts over once a runner has lasted.
 */
import type { Runner } from "graphile-worker";
import type { Logger } from "../shared/logger.ts";

export interface SupervisedRunnerOptions {
  /** Starts a runner; its worker and pool ids are to be added to `ids` as they are made. */
  start: (ids: Set<string>) => Promise<Runner>;
  /** Frees the jobs locked by the workers `ids` (graphile_worker.force_unlock_workers). */
  unlock: (ids: string[]) => Promise<void>;
  log: Logger;
  /** The first wait before starting again (ms); doubled up to `maxDelayMs` while starts fail. */
  minDelayMs?: number;
  maxDelayMs?: number;
  /** A runner that lasted this long (ms) has its next restart wait `minDelayMs` again. */
  healthyAfterMs?: number;
}

export interface SupervisedRunner {
  /** The worker and pool ids of the current runner, or of the ended one until they are unlocked. */
  ids(): string[];
  /** How many times a runner was started again after ending on its own. */
  restarts(): number;
  /** Stops the current runner (waiting for its jobs, as graphile-worker's stop does) and any restart. */
  stop(): Promise<void>;
}

export async function superviseRunner(options: SupervisedRunnerOptions): Promise<SupervisedRunner> {
  const { log } = options;
  const minDelay = options.minDelayMs ?? 1000;
  const maxDelay = options.maxDelayMs ?? 30_000;
  const healthyAfter = options.healthyAfterMs ?? 60_000;
  let ids = new Set<string>();
  let current: Runner | undefined;
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;
  let restarting: Promise<void> | undefined;
  let restarts = 0;
  let delay = minDelay;

  const schedule = () => {
    const wait = delay;
    delay = Math.min(delay * 2, maxDelay);
    timer = setTimeout(() => {
      timer = undefined;
      restarting = restart().finally(() => (restarting = undefined));
    }, wait);
    return wait;
  };

  const watch = (runner: Runner) => {
    const startedAt = Date.now();
    const ended = (error?: unknown) => {
      if (stopping || runner !== current) return;
      current = undefined;
      if (Date.now() - startedAt >= healthyAfter) delay = minDelay;
      const wait = schedule();
      log.error({ err: error }, `the job runner stopped on its own; starting it again in ${wait} ms`);
    };
    runner.promise.then(() => ended(), ended);
  };

  const restart = async () => {
    try {
      const held = [...ids];
      if (held.length) await options.unlock(held);
      if (stopping) return;
      ids = new Set();
      const runner = await options.start(ids);
      current = runner;
      restarts += 1;
      watch(runner);
      log.info({ restarts, unlocked: held }, "the job runner started again");
    } catch (error) {
      if (stopping) return;
      const wait = schedule();
      log.error({ err: error }, `starting the job runner again failed; next try in ${wait} ms`);
    }
  };

  current = await options.start(ids);
  watch(current);
  return {
    ids: () => [...ids],
    restarts: () => restarts,
    stop: async () => {
      stopping = true;
      clearTimeout(timer);
      await restarting;
      // A runner that ended on its own a moment ago (its end not yet seen here) refuses a second
      // stop with "Runner is already stopped": nothing is left to stop then.
      await current?.stop().catch((error: unknown) => log.debug({ err: error }, "the job runner had already stopped"));
    },
  };
}
