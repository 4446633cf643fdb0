/**
 * The PostgreSQL server a test or benchmark run uses: DATABASE_URL's server when set
 * (databases are created on it and dropped afterwards), else a throwaway embedded server
 * tuned for speed (no fsync). Migrations run once into a template database that every
 * test file clones (CREATE DATABASE … TEMPLATE), which takes milliseconds.
 */
import { randomBytes } from "node:crypto";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { startEmbeddedPostgres } from "../../shared/db/embedded.ts";
import { migrate } from "../../shared/db/migrate.ts";

export interface TestCluster {
  /** Superuser URL of the `postgres` maintenance database. */
  adminUrl: string;
  templateDb: string;
  /** Where the embedded server's programs or data live when not in place (as root in a private folder), one sentence each. */
  notes: string[];
  stop(): Promise<void>;
}

/** Replaces the database name of a connection URL. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/**
 * @param durable keep fsync on (benchmarks, to measure what production commits cost);
 *   tests turn it off for speed.
 */
export async function startTestCluster(options: { durable?: boolean } = {}): Promise<TestCluster> {
  const external = process.env.DATABASE_URL;
  const server = external
    ? { url: withDatabase(external, "postgres"), binariesRelocation: undefined, stop: async () => {} }
    : await startEmbeddedPostgres({
        dataDir: path.join(os.tmpdir(), `schemaforge-test-${process.pid}-${randomBytes(3).toString("hex")}`),
        persistent: false,
        settings: {
          ...(options.durable ? {} : { fsync: "off", synchronous_commit: "off", full_page_writes: "off" }),
          max_connections: "400",
          shared_buffers: "128MB",
        },
      });
  const templateDb = `sf_template_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query(`create database ${templateDb}`);
  await admin.end();
  await migrate(withDatabase(server.url, templateDb));
  return {
    adminUrl: server.url,
    templateDb,
    notes: server.binariesRelocation ? [server.binariesRelocation] : [],
    stop: async () => {
      if (external) {
        const c = new pg.Client({ connectionString: server.url });
        await c.connect();
        // test databases are named <template>_<suffix> (see db.ts)
        const { rows } = await c.query<{ datname: string }>("select datname from pg_database where starts_with(datname, $1)", [templateDb]);
        for (const row of rows) await c.query(`drop database if exists ${pg.escapeIdentifier(row.datname)} with (force)`);
        await c.end();
      }
      await server.stop();
    },
  };
}
