/**
 * Waiting until requests are blocked on a lock a test holds: the way race tests know the
 * concurrent requests have reached the contended row (each session of the test database
 * whose wait event is a lock counts), before the holder lets go.
 */
import { z } from "zod";
import { sql, type DatabasePool } from "../../shared/db/pool.ts";
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
