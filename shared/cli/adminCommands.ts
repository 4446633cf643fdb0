/**
 * Operator commands: `user:create` (the first administrator, say) and `oauth:client`
 * (another OAuth client for the password grant). Both print what was created, including
 * the secrets, once.
 */
import { jobStats } from "../jobs/console.ts";
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { hashPassword } from "../auth/passwords.ts";
import { ClientIdTaken, createClient } from "../auth/clients.ts";
import type { Config } from "../config.ts";
import { pendingMigrations } from "../db/migrate.ts";
import { createPool } from "../db/pool.ts";
import { emailTaken, insertUser, roles, type Role } from "../db/users.ts";
import { createLogger } from "../logger.ts";
import { openDatabase } from "./runtime.ts";

class UsageError extends Error {}
export { UsageError };

async function withPool<T>(config: Config, fn: (pool: Awaited<ReturnType<typeof createPool>>) => Promise<T>): Promise<T> {
  const database = await openDatabase(config, createLogger("warn"));
  try {
    const pending = await pendingMigrations(database.url);
    if (pending.length) throw new UsageError(`The database has pending migrations; run "npm run migrate" first.`);
    const pool = await createPool(database.url, { maxPoolSize: 2 });
    try {
      return await fn(pool);
    } finally {
      await pool.end();
    }
  } finally {
    await database.stop();
  }
}

const print = (line: string) => process.stdout.write(`${line}\n`);

/** `user:create --email E --name N [--username U] [--password P] [--role R]... [--unverified]` */
export async function userCreateCommand(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      email: { type: "string" },
      name: { type: "string" },
      username: { type: "string" },
      password: { type: "string" },
      role: { type: "string", multiple: true },
      unverified: { type: "boolean" },
    },
  });
  if (!values.email || !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(values.email)) throw new UsageError("--email with a valid address is required");
  const unknown = (values.role ?? []).filter((r) => !(roles as readonly string[]).includes(r));
  if (unknown.length) throw new UsageError(`unknown role ${unknown.join(", ")}; roles are ${roles.join(", ")}`);
  if (values.password !== undefined && values.password.length < 8) throw new UsageError("--password must have at least 8 characters");
  const password = values.password ?? randomBytes(12).toString("base64url");
  const email = values.email;
  const user = await withPool(config, async (pool) => {
    if (await emailTaken(pool, email)) throw new UsageError(`a user with e-mail ${email} already exists`);
    return insertUser(pool, {
      email,
      name: values.name ?? email.split("@")[0]!,
      username: values.username ?? email.split("@")[0]!.replace(/[^A-Za-z0-9_.-]/g, "").padEnd(2, "0"),
      passwordHash: await hashPassword(password),
      roles: (values.role ?? []) as Role[],
      emailVerified: !values.unverified,
    });
  });
  print(`created user ${user.id} <${user.email}> with roles ${user.roles.join(", ")}`);
  if (values.password === undefined) print(`password: ${password}  (shown once; change it after the first login)`);
}

/** `oauth:client --name N [--id ID]` */
export async function oauthClientCommand(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { name: { type: "string" }, id: { type: "string" } } });
  if (!values.name) throw new UsageError("--name is required");
  if (values.id !== undefined && !/^[A-Za-z0-9_.-]{1,128}$/.test(values.id)) throw new UsageError("--id may contain letters, digits, dots, dashes and underscores");
  const name = values.name;
  const created = await withPool(config, async (pool) => {
    try {
      return await createClient(pool, config, { name, ...(values.id ? { clientId: values.id } : {}) });
    } catch (error) {
      throw error instanceof ClientIdTaken ? new UsageError(error.message) : error;
    }
  });
  print(`client_id: ${created.clientId}`);
  print(`client_secret: ${created.clientSecret}  (shown once)`);
  print(`grant types: password, refresh_token; token endpoint: ${config.appUrl}/api/oauth/token`);
}

/** `jobs:stats [--json]`: the figures of GET /admin/jobs/stats (the same query), as text or JSON. */
export async function jobsStatsCommand(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { json: { type: "boolean" } } });
  const stats = await withPool(config, (pool) => jobStats(pool, config.worker.staleAfterMs));
  if (values.json) {
    print(JSON.stringify(stats));
    return;
  }
  const t = stats.totals;
  print(`queued ${t.queued}, running ${t.running}; last hour: ${t.finished_last_hour} finished, ${t.failed_last_hour} failed (${(t.failure_rate * 100).toFixed(1)} %)`);
  for (const k of stats.kinds) print(`  ${k.kind}: ${k.queued} queued, ${k.running} running`);
  print(`workers alive: ${stats.workers.length}`);
  for (const w of stats.workers) print(`  ${w.id} concurrency ${w.concurrency ?? "?"}, last beat ${w.beat_at.toISOString()}`);
  for (const j of stats.failed.slice(0, 5)) print(`failed #${j.id} ${j.kind}: ${j.error ?? ""}`);
}
