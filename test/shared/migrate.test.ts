import { spawnSync } from "node:child_process";
import { cp, mkdtemp, writeFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import t from "tap";
import { migrate, migrationsDir, pendingMigrations, readMigrations } from "../../shared/db/migrate.ts";
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

t.test("the migrate command applies migrations and reports", async (t) => {
  const url = await emptyDatabase(t);
  const result = spawnSync(process.execPath, [new URL("../../shared/cli/bin.ts", import.meta.url).pathname, "migrate"], {
    env: { ...process.env, DATABASE_URL: url, NODE_ENV: "test", LOG_LEVEL: "info" },
    encoding: "utf8",
    timeout: 60_000,
  });
  t.equal(result.status, 0, result.stderr);
  t.match(result.stdout, /applied 0001_foundation\.sql/);
  t.same(await pendingMigrations(url), []);
});

t.test("a failing migration rolls back alone; an edited one is refused", async (t) => {
  const url = await emptyDatabase(t);
  const dir = await mkdtemp(path.join(os.tmpdir(), "migrations-"));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await cp(migrationsDir, dir, { recursive: true });
  await writeFile(path.join(dir, "9000_broken.sql"), "create table half_done (id int);\nselect * from no_such_table;\n");
  await t.rejects(migrate(url, () => {}, dir), /Migration 9000_broken\.sql failed: relation "no_such_table" does not exist/);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  t.teardown(() => client.end());
  t.equal((await client.query("select to_regclass('half_done') as t")).rows[0].t, null, "nothing of the failed file remains");
  t.same(await pendingMigrations(url, dir), ["9000_broken.sql"]);

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
