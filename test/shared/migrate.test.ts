import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdtemp, writeFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import t from "tap";
import { migrate, MIGRATION_LOCK_KEY, migrationsDir, pendingMigrations, readMigrations } from "../../shared/db/migrate.ts";
import { emptyDatabase } from "../support/db.ts";

async function appliedVersions(url: string): Promise<number[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ version: number }>("select version from schema_migrations order by version")).rows.map((r) => r.version);
  } finally {
    await client.end();
  }
}

t.test("two processes migrating at once apply each migration exactly once", async (t) => {
  const url = await emptyDatabase(t);
  const all = await readMigrations();
  t.same(await pendingMigrations(url), all.map((m) => m.file));
  const [a, b] = await Promise.all([migrate(url), migrate(url)]);
  t.same([...a.applied, ...b.applied].sort(), all.map((m) => m.file), "each file applied by exactly one of them");
  t.same(await appliedVersions(url), all.map((m) => m.version));
  t.same(await pendingMigrations(url), []);
  t.same((await migrate(url)).applied, [], "a third run finds nothing to do");
});

const bin = new URL("../../shared/cli/bin.ts", import.meta.url).pathname;

/** Runs `bin.ts migrate` against `url`; DATA_DIR is a scratch folder, so the development secrets it generates never land in the checkout. */
function runMigrateCommand(url: string, dataDir: string): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [bin, "migrate"], {
    env: { ...process.env, DATABASE_URL: url, DATA_DIR: dataDir, NODE_ENV: "test", LOG_LEVEL: "info" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  return new Promise((resolve) =>
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    }),
  );
}

t.test("the migrate command, twice at once against an empty database: one applies everything and reports it, the other waits and finds nothing", async (t) => {
  const url = await emptyDatabase(t);
  const all = await readMigrations();
  // Hold the migrations lock until both processes are queued on it, so they really race
  // for it instead of one finishing before the other starts.
  const holder = new pg.Client({ connectionString: url });
  await holder.connect();
  t.teardown(() => holder.end());
  await holder.query("select pg_advisory_lock($1)", [MIGRATION_LOCK_KEY]);
  const root = t.testdir({ first: {}, second: {} });
  const dataDirs = [path.join(root, "first"), path.join(root, "second")];
  const runs = dataDirs.map((dataDir) => runMigrateCommand(url, dataDir));
  let waiting = 0;
  for (let i = 0; i < 600 && waiting < 2; i += 1) {
    await new Promise((r) => setTimeout(r, 50));
    const { rows } = await holder.query<{ n: number }>(
      "select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted and database = (select oid from pg_database where datname = current_database())",
    );
    waiting = rows[0]!.n;
  }
  t.equal(waiting, 2, "both processes wait on the migrations lock");
  await holder.query("select pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY]);
  const [a, b] = await Promise.all(runs);
  t.equal(a!.code, 0, a!.output);
  t.equal(b!.code, 0, b!.output);

  const appliedLines = [a!, b!].flatMap((r) => [...r.output.matchAll(/"msg":"applied (\d{4}_[a-z0-9_]+\.sql)"/g)].map((m) => m[1]!));
  t.same(appliedLines.sort(), all.map((m) => m.file), "each migration was applied by exactly one process");
  t.match(a!.output + b!.output, /applied 0001_foundation\.sql/);
  for (const dataDir of dataDirs) t.ok(existsSync(path.join(dataDir, "secrets.json")), "its development defaults went to the given DATA_DIR, not the checkout");
  const summaries = [a!, b!].map((r) => /"msg":"(applied \d+ migration\(s\)|database is up to date)"/.exec(r.output)?.[1]).sort();
  t.same(summaries, [`applied ${all.length} migration(s)`, "database is up to date"], "one applied them all, the other found nothing to do");
  t.same(await appliedVersions(url), all.map((m) => m.version), "one row per migration");

  const { rows } = await holder.query<{ schemas: number; ids: number[] }>(`
    select (select count(*)::int from pg_namespace where nspname = 'graphile_worker') as schemas,
           (select array_agg(id order by id) from graphile_worker.migrations) as ids`);
  t.equal(rows[0]!.schemas, 1, "graphile_worker's schema exists");
  const ids = rows[0]!.ids;
  t.ok(ids.length > 0, "with its migrations recorded");
  t.same(ids, Array.from({ length: ids.length }, (_, i) => ids[0]! + i), "each of them once, in sequence");
});

t.test("a failing migration rolls back alone; an edited one is refused", async (t) => {
  const url = await emptyDatabase(t);
  const dir = await mkdtemp(path.join(os.tmpdir(), "migrations-"));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  // The first real migration and a broken one after it: what applied before the failure
  // stays, the failed file leaves nothing. (The whole set is applied by the tests above.)
  const [foundation] = await readMigrations();
  await cp(path.join(migrationsDir, foundation!.file), path.join(dir, foundation!.file));
  await writeFile(path.join(dir, "9000_broken.sql"), "create table half_done (id int);\nselect * from no_such_table;\n");
  await t.rejects(migrate(url, () => {}, dir), /Migration 9000_broken\.sql failed: relation "no_such_table" does not exist/);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  t.teardown(() => client.end());
  t.equal((await client.query("select to_regclass('half_done') as t")).rows[0].t, null, "nothing of the failed file remains");
  t.same(await pendingMigrations(url, dir), ["9000_broken.sql"], "the migration before it stays applied");

  await rm(path.join(dir, "9000_broken.sql"));
  const first = (await readMigrations(dir))[0]!;
  await writeFile(path.join(dir, first.file), `${first.sql}\n-- edited\n`);
  await t.rejects(migrate(url, () => {}, dir), /was edited after it was applied/);
});

t.test("badly named migration files are refused", async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), "migrations-"));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(path.join(dir, "1_Bad Name.sql"), "select 1;");
  await t.rejects(readMigrations(dir), /is not named NNNN_snake_name\.sql/);
});
