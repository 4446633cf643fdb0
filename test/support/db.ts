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
}

function clusterEnv(): { adminUrl: string; template: string } {
  const adminUrl = process.env.TEST_PG_ADMIN_URL;
  const template = process.env.TEST_PG_TEMPLATE;
  if (!adminUrl || !template) throw new Error("Run tests through `npm test` (test/run.ts), which prepares the database server.");
  return { adminUrl, template };
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: clusterEnv().adminUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Creates an empty (unmigrated) database; dropped in `t.teardown`. Returns its URL. */
export async function emptyDatabase(t: Test): Promise<string> {
  const { adminUrl, template } = clusterEnv();
  const name = `${template}_e${randomBytes(5).toString("hex")}`;
  await admin((c) => c.query(`create database ${name} template template0`));
  t.teardown(() => admin((c) => c.query(`drop database if exists ${name} with (force)`)));
  return withDatabase(adminUrl, name);
}

/** Creates a database cloned from the migrated template; dropped in `t.teardown`. */
export async function freshDatabase(t: Test, options: { poolSize?: number } = {}): Promise<TestDatabase> {
  const { adminUrl, template } = clusterEnv();
  const name = `${template}_${randomBytes(5).toString("hex")}`;
  await admin((c) => c.query(`create database ${name} template ${template}`));
  const url = withDatabase(adminUrl, name);
  const pool = await createPool(url, { maxPoolSize: options.poolSize ?? 5 });
  t.teardown(async () => {
    await pool.end();
    await admin((c) => c.query(`drop database if exists ${name} with (force)`));
  });
  return { url, name, pool };
}
