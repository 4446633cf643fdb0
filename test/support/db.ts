/**
 * A fresh, migrated database per test file: a clone of the run's template database,
 * dropped when the test ends.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import type { Test } from "tap";
import { createPool, type DatabasePool } from "../../shared/db/pool.ts";
import { withDatabase } from "./cluster.ts";

export interface TestDatabase {
  url: string;
  name: string;
  pool: DatabasePool;
  /** A plain `pg` pool on the same database (as the worker's job-queue pool); it connects on first use. */
  pgPool: pg.Pool;
}

/** The test run's database server (its admin URL) and migrated template database. */
export function clusterEnv(): { adminUrl: string; template: string } {
  const adminUrl = process.env.TEST_PG_ADMIN_URL;
  const template = process.env.TEST_PG_TEMPLATE;
  if (!adminUrl || !template) throw new Error("Run tests through `npm test` (test/run.ts), which prepares the database server.");
  return { adminUrl, template };
}

/** Runs `fn` on a connection of its own to the server's admin database. */
export async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: clusterEnv().adminUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * Drops database `name` once no statement runs on it any more (at most `waitMs`), then by
 * force: work a test left in flight (a job's last write, a completion the queue sends after
 * its worker stopped) ends normally instead of failing on a killed connection; idle
 * connections are closed by the drop.
 */
async function dropDatabase(name: string, waitMs = 5000): Promise<void> {
  await admin(async (c) => {
    const until = Date.now() + waitMs;
    while (Date.now() < until) {
      const busy = await c.query<{ n: number }>(
        "select count(*)::int as n from pg_stat_activity where datname = $1 and state is distinct from 'idle' and pid <> pg_backend_pid()",
        [name],
      );
      if (busy.rows[0]?.n === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await c.query(`drop database if exists ${name} with (force)`);
  });
}

/** Creates an empty (unmigrated) database; dropped in `t.teardown`. Returns its URL. */
export async function emptyDatabase(t: Test): Promise<string> {
  const { adminUrl, template } = clusterEnv();
  const name = `${template}_e${randomBytes(5).toString("hex")}`;
  await admin((c) => c.query(`create database ${name} template template0`));
  t.teardown(() => dropDatabase(name));
  return withDatabase(adminUrl, name);
}

/** Creates a database cloned from the migrated template; dropped in `t.teardown`. */
export async function freshDatabase(t: Test, options: { poolSize?: number } = {}): Promise<TestDatabase> {
  const { adminUrl, template } = clusterEnv();
  const name = `${template}_${randomBytes(5).toString("hex")}`;
  // FILE_COPY copies the template's files instead of writing them through the WAL: a
  // fraction of the time and I/O for a database this small (the checkpoint it takes is
  // cheap on the test cluster, which runs without fsync).
  await admin((c) => c.query(`create database ${name} template ${template} strategy file_copy`));
  const url = withDatabase(adminUrl, name);
  const pool = await createPool(url, { maxPoolSize: options.poolSize ?? 5 });
  const pgPool = new pg.Pool({ connectionString: url, max: 2 });
  t.teardown(async () => {
    await pool.end();
    await pgPool.end();
    await dropDatabase(name);
  });
  return { url, name, pool, pgPool };
}
