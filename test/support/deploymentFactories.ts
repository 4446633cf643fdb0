/**
 * Factories of the deployment area: code generations with their files (inserted as the
 * generation writer leaves them, without running templates), environments through the
 * API, and waiting for a deployment to finish.
 */
import { z } from "zod";
import { ignoredRow, sql, type DatabasePool } from "../../shared/db/pool.ts";
import { request } from "./http.ts";

/** Some generated files: nested folders, a non-ASCII name, an empty file and binary bytes. */
export function sampleFiles(tag = "1"): Record<string, Buffer> {
  return {
    "index.php": Buffer.from(`<?php echo "release ${tag}";\n`),
    "src/Models/User.php": Buffer.from(`<?php\nclass User { const RELEASE = "${tag}"; }\n`),
    "src/Models/Größe.php": Buffer.from(`<?php // ${tag} ü\n`),
    "config/empty.txt": Buffer.alloc(0),
    "assets/logo.bin": Buffer.from([0, 1, 2, 255, 254, Number(tag.charCodeAt(0) % 256)]),
  };
}

/**
 * Inserts a code generation of `projectId` holding `files` (path → content).
 * No CodeGenerated outbox event is recorded unless `withEvent` is set.
 */
export async function buildGeneration(
  pool: DatabasePool,
  projectId: number,
  userId: number | null,
  files: Record<string, Buffer | string> = sampleFiles(),
  options: { withEvent?: boolean } = {},
): Promise<number> {
  return pool.transaction(async (tx) => {
    const entries = Object.entries(files).map(([path, content]) => [path, Buffer.isBuffer(content) ? content : Buffer.from(content)] as const);
    const total = entries.reduce((sum, [, content]) => sum + content.length, 0);
    const id = await tx.oneFirst(sql.type(z.object({ id: z.number() }))`
      insert into code_generations (project_id, user_id, file_count, total_bytes)
      values (${projectId}, ${userId}, ${entries.length}, ${total}) returning id`);
    for (const [path, content] of entries) {
      await tx.query(sql.type(ignoredRow)`
        insert into code_generation_files (code_generation_id, path, content, size) values (${id}, ${path}, ${sql.binary(content)}, ${content.length})`);
    }
    if (options.withEvent) {
      await tx.query(sql.type(ignoredRow)`
        insert into outbox_events (event_type, project_id, actor_id, payload)
        values ('CodeGenerated', ${projectId}, ${userId}, ${sql.jsonb({ code_generation_id: id, file_count: entries.length })})`);
    }
    return id;
  });
}

/** Creates an environment through the API and returns its id. @throws when the API refuses */
export async function buildEnvironment(baseUrl: string, token: string, projectId: number, body: Record<string, unknown>): Promise<number> {
  const res = await request(baseUrl, "POST", `/api/projects/${projectId}/environments`, { token, body: { name: "Production", type: "production", ...body } });
  if (res.status !== 201) throw new Error(`environment not created: ${res.status} ${res.text}`);
  return (res.body as { environment: { id: number } }).environment.id;
}

/** Creates and executes a deployment through the API; returns its id. */
export async function startDeployment(baseUrl: string, token: string, body: Record<string, unknown>): Promise<number> {
  const created = await request(baseUrl, "POST", "/api/deployments", { token, body });
  if (created.status !== 201) throw new Error(`deployment not created: ${created.status} ${created.text}`);
  const id = (created.body as { deployment: { id: number } }).deployment.id;
  const executed = await request(baseUrl, "POST", `/api/deployments/${id}/execute`, { token });
  if (executed.status !== 202) throw new Error(`deployment not executed: ${executed.status} ${executed.text}`);
  return id;
}

/** Polls GET /deployments/{id} until its status is final; returns the deployment. */
export async function waitForDeployment(baseUrl: string, token: string, id: number, timeoutMs = 60_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await request(baseUrl, "GET", `/api/deployments/${id}`, { token });
    const deployment = (res.body as { deployment?: { status: string } }).deployment;
    if (deployment && ["succeeded", "failed", "rolled_back"].includes(deployment.status)) return deployment;
    if (Date.now() > deadline) throw new Error(`deployment ${id} still ${deployment?.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}

/**
 * Every place a secret could leak to in the database: each row of every table of the
 * service and of graphile-worker, as text. Returns `table: …excerpt…` for each row holding
 * one of `secrets` (sealed columns are ciphertext and never match).
 */
export async function findSecrets(pool: DatabasePool, secrets: string[]): Promise<string[]> {
  const tables = await pool.any(sql.type(z.object({ schema: z.string(), name: z.string() }))`
    select table_schema as schema, table_name as name from information_schema.tables
    where table_schema in ('public', 'graphile_worker') and table_type = 'BASE TABLE'`);
  const found: string[] = [];
  for (const table of tables) {
    const rows = await pool.anyFirst(sql.type(z.object({ row: z.string() }))`select t::text as row from ${sql.identifier([table.schema, table.name])} t`);
    for (const row of rows) {
      for (const secret of secrets) {
        const at = row.indexOf(secret);
        if (at >= 0) found.push(`${table.schema}.${table.name}: …${row.slice(Math.max(0, at - 60), at + secret.length + 20)}…`);
      }
    }
  }
  return found;
}
