/**
 * Migration runner: applies sql/migrations/NNNN_name.sql in order, each in its own
 * transaction, recording version, name and checksum. An advisory lock makes concurrent
 * starters (several `release` or `web` processes at once) migrate exactly once; the others
 * wait and then find nothing to do. graphile-worker's own schema is installed first, under
 * the same lock, since our migrations and tasks rely on `graphile_worker.add_job`.
 *
 * Migration files are plain multi-statement SQL, run over a raw `pg` client (the simple
 * query protocol), which is the one place the service runs SQL text that is not a Slonik
 * tagged template.
 */
import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { Logger, runMigrations as runWorkerMigrations } from "graphile-worker";

export const migrationsDir = fileURLToPath(new URL("../../sql/migrations/", import.meta.url));

/** The advisory lock that serializes migrating processes (arbitrary, stable: "schemaforge migrations"). */
export const MIGRATION_LOCK_KEY = 7_320_151_001;

export interface Migration {
  version: number;
  name: string;
  file: string;
  sql: string;
  checksum: string;
}

/** Lists the migration files in order. @throws on a badly named or duplicate version. */
export async function readMigrations(dir = migrationsDir): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith(".sql")).sort();
  const seen = new Set<number>();
  const migrations: Migration[] = [];
  for (const file of files) {
    const match = /^(\d{4})_([a-z0-9_]+)\.sql$/.exec(file);
    if (!match) throw new Error(`Migration file ${file} is not named NNNN_snake_name.sql`);
    const version = Number(match[1]);
    if (seen.has(version)) throw new Error(`Two migrations share version ${match[1]}`);
    seen.add(version);
    const sql = await readFile(path.join(dir, file), "utf8");
    migrations.push({ version, name: match[2]!, file, sql, checksum: createHash("sha256").update(sql).digest("hex") });
  }
  return migrations;
}

export interface MigrateResult {
  applied: string[];
}

/** Brings the database at `url` up to date. @throws when an applied migration was edited. */
export async function migrate(url: string, log: (line: string) => void = () => {}, dir = migrationsDir): Promise<MigrateResult> {
  const migrations = await readMigrations(dir);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("set client_min_messages = warning");
    await client.query("select pg_advisory_lock($1)", [MIGRATION_LOCK_KEY]);
    await runWorkerMigrations({ connectionString: url, logger: quietWorkerLogger() });
    await client.query(`create table if not exists schema_migrations (
      version integer primary key,
      name text not null,
      checksum text not null,
      applied_at timestamptz not null default now()
    )`);
    const { rows } = await client.query<{ version: number; checksum: string; name: string }>(
      "select version, checksum, name from schema_migrations",
    );
    const applied = new Map(rows.map((r) => [r.version, r]));
    const done: string[] = [];
    for (const m of migrations) {
      const previous = applied.get(m.version);
      if (previous) {
        if (previous.checksum !== m.checksum) {
          throw new Error(`Migration ${m.file} was edited after it was applied; add a new migration instead.`);
        }
        continue;
      }
      await client.query("begin");
      try {
        await client.query(m.sql);
        await client.query("insert into schema_migrations (version, name, checksum) values ($1, $2, $3)", [m.version, m.name, m.checksum]);
        await client.query("commit");
      } catch (error) {
        await client.query("rollback");
        throw new Error(`Migration ${m.file} failed: ${(error as Error).message}`, { cause: error });
      }
      log(`applied ${m.file}`);
      done.push(m.file);
    }
    return { applied: done };
  } finally {
    await client.query("select pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY]).catch(() => {});
    await client.end();
  }
}

function quietWorkerLogger(): Logger {
  // graphile-worker logs "Migrating database schema..." at info; we report our own lines.
  return new Logger(() => () => {});
}

/** Lists migration files not yet applied to the database at `url`. */
export async function pendingMigrations(url: string, dir = migrationsDir): Promise<string[]> {
  const migrations = await readMigrations(dir);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const table = await client.query("select to_regclass('schema_migrations') as t");
    if (!table.rows[0]?.t) return migrations.map((m) => m.file);
    const { rows } = await client.query<{ version: number }>("select version from schema_migrations");
    const applied = new Set(rows.map((r) => r.version));
    return migrations.filter((m) => !applied.has(m.version)).map((m) => m.file);
  } finally {
    await client.end();
  }
}
