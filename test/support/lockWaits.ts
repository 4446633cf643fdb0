/**
 * Waiting until requests are blocked on a lock a test holds: the way race tests know the
 * concurrent requests have reached the contended row (each session of the test database
 * whose wait event is a lock counts), before the holder lets go.
 */
import type { Test } from "tap";
import { z } from "zod";
import { createPool, sql, type DatabasePool, type DatabaseTransactionConnection } from "../../shared/db/pool.ts";
import { until } from "./wait.ts";

/** Resolves once at least `count` sessions of the current database wait on a lock. */
export async function untilWaitingOnLocks(pool: DatabasePool, count: number, message: string, timeoutMs = 60_000): Promise<void> {
  await until(
    async () =>
      (await pool.oneFirst(sql.type(z.object({ n: z.number() }))`
        select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`)) >= count,
    { timeoutMs, message },
  );
}

/** A transaction of the test's own holding row locks until `release()`; `done` settles once it ended. */
export interface HeldLocks {
  release: () => void;
  done: Promise<void>;
}

/**
 * Opens a transaction on a connection of its own, runs `take` (the statements that lock), and
 * holds it open until `release()`; `then` runs after the release, before the commit (a change
 * the waiting requests are to see). Resolves once `take` is done, so the locks are held.
 */
export async function holdLocks(
  t: Test,
  url: string,
  take: (tx: DatabaseTransactionConnection) => Promise<unknown>,
  then?: (tx: DatabaseTransactionConnection) => Promise<unknown>,
): Promise<HeldLocks> {
  const holder = await createPool(url, { maxPoolSize: 1 });
  t.teardown(() => holder.end());
  let held!: () => void;
  let release!: () => void;
  const holding = new Promise<void>((resolve) => (held = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  const done = holder.transaction(async (tx) => {
    await take(tx);
    held();
    await released;
    if (then) await then(tx);
  });
  await Promise.race([holding, done]);
  return { release, done };
}
