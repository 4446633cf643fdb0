/**
 * Migration 0210 ends the personal API tokens of accounts that had lost the developer role
 * before a role change started deleting them: a database migrated up to 0209 gets accounts
 * with and without the role and a token each, then the remaining migrations run. Only the
 * tokens of accounts holding `developer` or `super_admin` remain.
 */
import { cp, mkdtemp, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import t from "tap";
import { migrate, migrationsDir } from "../../shared/db/migrate.ts";
import { emptyDatabase } from "../support/db.ts";

t.test("tokens of accounts without the developer role are deleted, the others kept", async (t) => {
  const url = await emptyDatabase(t);
  const before = await mkdtemp(path.join(os.tmpdir(), "migrations-"));
  t.teardown(() => rm(before, { recursive: true, force: true }));
  for (const file of await readdir(migrationsDir)) {
    if (file.endsWith(".sql") && Number(file.slice(0, 4)) < 210) await cp(path.join(migrationsDir, file), path.join(before, file));
  }
  await migrate(url, () => {}, before);

  const db = new pg.Client({ connectionString: url });
  await db.connect();
  t.teardown(() => db.end());
  const holders: Record<string, string[]> = { plain: ["user"], demoted_admin: ["user", "admin"], developer: ["user", "developer"], super: ["user", "super_admin"] };
  for (const [name, roles] of Object.entries(holders)) {
    const { rows } = await db.query<{ id: string }>("insert into users (name, username, email) values ($1, $1, $1 || '@example.test') returning id", [name]);
    const id = rows[0]!.id;
    for (const role of roles) await db.query("insert into user_roles (user_id, role) values ($1, $2)", [id, role]);
    await db.query("insert into personal_access_tokens (user_id, name, token_hash) values ($1, 'ci', '\\x00')", [id]);
  }

  const { applied } = await migrate(url);
  t.ok(applied.includes("0210_personal_tokens_need_developer.sql"), applied.join(", "));
  const { rows } = await db.query<{ username: string }>("select u.username from personal_access_tokens t join users u on u.id = t.user_id order by u.username");
  t.same(rows.map((r) => r.username), ["developer", "super"]);
});
