/**
 * Factories of the deployment area: code generations with their files (inserted as the
 * generation writer leaves them, without running templates), environments through the
 * API, waiting for a deployment to finish, and the secret scans (every answer, every row).
 */
import { z } from "zod";
import { ignoredRow, sql, type DatabasePool } from "../../shared/db/pool.ts";
import { client, request } from "./http.ts";

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
 * `client(baseUrl, token)` that also pushes the raw text of every answer into `answers`, so a
 * test can check that no secret appears in any response it got.
 */
export function recordingClient(baseUrl: string, token: string, answers: string[]): ReturnType<typeof client> {
  const inner = client(baseUrl, token);
  const recorded = <F extends (...args: never[]) => Promise<{ text: string }>>(call: F) =>
    (async (...args: Parameters<F>) => {
      const res = await call(...args);
      answers.push(res.text);
      return res;
    }) as F;
  return { get: recorded(inner.get), post: recorded(inner.post), put: recorded(inner.put), patch: recorded(inner.patch), delete: recorded(inner.delete) };
}

/**
 * Every place a secret could leak to in the database: each row of every table of the
 * service and of graphile-worker (whose `_private_jobs` holds the job payloads), as text, and
 * each `bytea` value (stored file chunks, generated files, sealed columns) decoded as UTF-8.
 * Returns `table: …excerpt…` for each row holding one of `secrets`. Sealed columns are
 * AES-GCM ciphertext and never match.
 */
export async function findSecrets(pool: DatabasePool, secrets: string[]): Promise<string[]> {
  const columns = await pool.any(sql.type(z.object({ schema: z.string(), name: z.string(), column: z.string(), type: z.string() }))`
    select c.table_schema as schema, c.table_name as name, c.column_name as column, c.data_type as type
    from information_schema.columns c
    join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
    where c.table_schema in ('public', 'graphile_worker') and t.table_type = 'BASE TABLE'
    order by c.table_schema, c.table_name, c.ordinal_position`);
  const tables = new Map<string, { schema: string; name: string; binary: string[] }>();
  for (const column of columns) {
    const key = `${column.schema}.${column.name}`;
    const table = tables.get(key) ?? { schema: column.schema, name: column.name, binary: [] };
    if (column.type === "bytea") table.binary.push(column.column);
    tables.set(key, table);
  }
  const found: string[] = [];
  const scan = (where: string, text: string) => {
    for (const secret of secrets) {
      const at = text.indexOf(secret);
      if (at >= 0) found.push(`${where}: …${text.slice(Math.max(0, at - 60), at + secret.length + 20)}…`);
    }
  };
  for (const table of tables.values()) {
    const name = sql.identifier([table.schema, table.name]);
    for (const row of await pool.anyFirst(sql.type(z.object({ row: z.string() }))`select t::text as row from ${name} t`)) {
      scan(`${table.schema}.${table.name}`, row);
    }
    for (const column of table.binary) {
      // As bytes, then decoded here: invalid UTF-8 (ciphertext, binary files) becomes U+FFFD
      // around a plaintext secret without hiding it.
      const values = await pool.anyFirst(sql.type(z.object({ value: z.instanceof(Buffer) }))`
        select ${sql.identifier([column])} as value from ${name} where ${sql.identifier([column])} is not null`);
      for (const value of values) scan(`${table.schema}.${table.name}.${column}`, value.toString("utf8"));
    }
  }
  return found;
}
