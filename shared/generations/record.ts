/**
 * Recording a code generation: the generation row, its files, its archive row (status
 * `building`), the `archives__build` job and the `CodeGenerated` outbox event, all in one
 * transaction, so a consumer never sees a generation without its files or its event.
 */
import { z } from "zod";
import { ignoredRow, sql, type DatabasePool, type CommonQueryMethods } from "../db/pool.ts";
import { recordEvent } from "../events/outbox.ts";
import { enqueue } from "../jobs/enqueue.ts";
import { archivesBuild } from "../jobs/kinds.ts";
import { notFound } from "../errors.ts";
import { lockProjectForContent } from "../projects/writable.ts";

export interface GenerationInput {
  projectId: number;
  userId: number | null;
  templateId: number | null;
  generatorId: number | null;
  schemaId: number | null;
  values: Record<string, unknown>;
  /** Output path → content. */
  files: Record<string, string>;
  /** The job that ran the templates; a retry of it finds the generation it recorded. */
  jobId: number | null;
  /**
   * A generation whose files are copied (in SQL, bytes as they are) under the paths `files`
   * does not give: an apply of adjustments writes only the files it merged.
   */
  copyFrom?: number;
  /** An apply's own idempotency key (its job run); a retry finds the generation it wrote. */
  applyKey?: string;
}

const idRow = z.object({ id: z.number() });

/** Rows a single insert of files carries at most (by count and by bytes). */
const BATCH_FILES = 200;
const BATCH_BYTES = 4 * 1024 * 1024;

async function insertFiles(tx: CommonQueryMethods, generationId: number, files: Record<string, string>): Promise<void> {
  let paths: string[] = [];
  let contents: string[] = [];
  let sizes: number[] = [];
  let bytes = 0;
  const flush = async () => {
    if (paths.length === 0) return;
    await tx.query(sql.type(ignoredRow)`
      insert into code_generation_files (code_generation_id, path, content, size)
      select ${generationId}, u.path, decode(u.content, 'base64'), u.size
      from unnest(${sql.array(paths, "text")}, ${sql.array(contents, "text")}, ${sql.array(sizes, "int4")}) as u(path, content, size)`);
    paths = [];
    contents = [];
    sizes = [];
    bytes = 0;
  };
  for (const [path, content] of Object.entries(files)) {
    const buffer = Buffer.from(content, "utf8");
    paths.push(path);
    contents.push(buffer.toString("base64"));
    sizes.push(buffer.length);
    bytes += buffer.length;
    if (paths.length >= BATCH_FILES || bytes >= BATCH_BYTES) await flush();
  }
  await flush();
}

/** Copies the files of generation `from` except `skip` into `generationId`, and counts them into its totals. */
async function copyFiles(tx: CommonQueryMethods, generationId: number, from: number, skip: string[]): Promise<{ count: number; bytes: number }> {
  return tx.one(sql.type(z.object({ count: z.number(), bytes: z.number() }))`
    with copied as (
      insert into code_generation_files (code_generation_id, path, content, size)
      select ${generationId}, f.path, f.content, f.size from code_generation_files f
      where f.code_generation_id = ${from} and f.path <> all(${sql.array(skip, "text")})
      returning size
    )
    update code_generations g set file_count = g.file_count + c.count, total_bytes = g.total_bytes + c.bytes
    from (select count(*)::int as count, coalesce(sum(size), 0)::float8 as bytes from copied) c
    where g.id = ${generationId}
    returning c.count, c.bytes`);
}

/**
 * The template, generator and schema a run started from may have been deleted while it ran:
 * a gone template or generator is gone for the run too (404, as when it is gone before the run
 * starts), while a gone schema leaves the generation without its link, as deleting a schema
 * leaves the generations made from it. Each found row is key-share locked, so it stays until
 * the generation is recorded. Returns the schema id to record.
 * @throws AppError 404
 */
async function liveSources(tx: CommonQueryMethods, input: GenerationInput): Promise<number | null> {
  const exists = (table: "templates" | "generators" | "schemas", id: number) =>
    tx.maybeOneFirst(sql.type(idRow)`select id from ${sql.identifier([table])} where id = ${id} for key share`);
  if (input.templateId !== null && (await exists("templates", input.templateId)) === null) throw notFound("Template");
  if (input.generatorId !== null && (await exists("generators", input.generatorId)) === null) throw notFound("Generator");
  return input.schemaId !== null && (await exists("schemas", input.schemaId)) !== null ? input.schemaId : null;
}

/**
 * Records a generation and schedules its archive; returns its id (the existing one when
 * `jobId` or `applyKey` already recorded one). `alsoWrite` adds rows of its own to a new
 * generation in the same transaction. @throws AppError 404, 423, 402 or 409 when the project
 * was deleted, locked, soft-locked or archived since the request, 404 when its template or
 * generator was deleted (nothing is recorded).
 */
export async function recordGeneration(pool: DatabasePool, input: GenerationInput, alsoWrite?: (tx: CommonQueryMethods, id: number) => Promise<void>): Promise<number> {
  return pool.transaction(async (tx) => {
    if (input.jobId !== null || input.applyKey !== undefined) {
      const existing = await tx.maybeOneFirst(sql.type(idRow)`
        select id from code_generations where ${input.applyKey !== undefined ? sql.fragment`apply_key = ${input.applyKey}` : sql.fragment`job_id = ${input.jobId}`}`);
      if (existing !== null) return existing;
    }
    // A generation is content of the project: it is recorded only while the project accepts
    // changes, which may have stopped since the request (locked, expired, archived, deleted).
    const refusal = await lockProjectForContent(tx, input.projectId);
    if (refusal) throw refusal;
    const schemaId = await liveSources(tx, input);
    const paths = Object.keys(input.files);
    const totalBytes = Object.values(input.files).reduce((sum, content) => sum + Buffer.byteLength(content, "utf8"), 0);
    const id = await tx.oneFirst(sql.type(idRow)`
      insert into code_generations (project_id, user_id, template_id, generator_id, schema_id, variables, file_count, total_bytes, job_id, adjusted_from_id, apply_key)
      values (${input.projectId}, ${input.userId}, ${input.templateId}, ${input.generatorId}, ${schemaId},
        ${sql.jsonb(input.values as never)}, ${paths.length}, ${totalBytes}, ${input.jobId}, ${input.copyFrom ?? null}, ${input.applyKey ?? null})
      returning id`);
    await insertFiles(tx, id, input.files);
    const copied = input.copyFrom === undefined ? { count: 0, bytes: 0 } : await copyFiles(tx, id, input.copyFrom, paths);
    const job = await enqueue(tx, archivesBuild, { code_generation_id: id }, { userId: input.userId, projectId: input.projectId });
    await tx.query(sql.type(ignoredRow)`insert into project_archives (code_generation_id, job_id) values (${id}, ${job.id})`);
    if (alsoWrite) await alsoWrite(tx, id);
    await recordEvent(tx, {
      type: "CodeGenerated",
      projectId: input.projectId,
      actorId: input.userId,
      payload: {
        code_generation_id: id,
        template_id: input.templateId,
        generator_id: input.generatorId,
        schema_id: schemaId,
        file_count: paths.length + copied.count,
        total_bytes: totalBytes + copied.bytes,
      },
    });
    return id;
  });
}
