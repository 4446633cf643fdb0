/**
 * The zip of a code generation: streamed from `code_generation_files` (one binary COPY, about
 * 256 KiB of files in memory at a time) through the zip writer into storage, with an expiry;
 * and its removal.
 *
 * Glossary: an archive is *live* when it is ready, not deleted and not expired; *building*
 * until the `archives__build` job stores it; *failed* when that job gave up.
 */
import { randomBytes } from "node:crypto";
import type pg from "pg";
import { z } from "zod";
import { createZipStream, type ZipEntryInput } from "../archive/zipWriter.ts";
import { ignoredRow, sql, type CommonQueryMethods, type DatabasePool } from "../db/pool.ts";
import type { Storage } from "../storage/storage.ts";
import { generationFilesCopied } from "./files.ts";

export const archiveRow = z.object({
  id: z.number(),
  code_generation_id: z.number(),
  status: z.enum(["building", "ready", "failed"]),
  file_path: z.string().nullable(),
  file_size: z.number().nullable(),
  job_id: z.number().nullable(),
  created_at: z.date(),
  expires_at: z.date().nullable(),
  deleted_at: z.date().nullable(),
  generated_at: z.date(),
});
export type ArchiveRow = z.infer<typeof archiveRow>;

/** Storage key of one build of a generation's zip. */
export const archiveKey = (generationId: number, build: string) => `archives/generation-${generationId}-${build}.zip`;

/** The archive of a generation, or null. */
export async function findArchive(conn: CommonQueryMethods, generationId: number): Promise<ArchiveRow | null> {
  return conn.maybeOne(sql.type(archiveRow)`
    select a.id, a.code_generation_id, a.status, a.file_path, a.file_size, a.job_id, a.created_at, a.expires_at, a.deleted_at,
      g.created_at as generated_at
    from project_archives a join code_generations g on g.id = a.code_generation_id
    where a.code_generation_id = ${generationId}`);
}

/** Whether the archive can be downloaded now. */
export const isLive = (a: Pick<ArchiveRow, "status" | "deleted_at" | "expires_at">) =>
  a.status === "ready" && a.deleted_at === null && (a.expires_at === null || a.expires_at.getTime() > Date.now());

/**
 * The generation's files as zip entries (a file's path and content are an entry's, passed on
 * as they are: no second generator and object per file). The zip is consumed inside the
 * storage upload's transaction; the files come over a connection of their own (the upload's
 * must not be shared), and an archive that fails part-way closes the read with it.
 */
const entries = (pgPool: pg.Pool, generationId: number): AsyncIterable<ZipEntryInput> => generationFilesCopied(pgPool, generationId);

/** What a build uses: the Slonik pool, a plain `pg` pool for the binary COPY of the files, the storage. */
export interface ArchiveDeps {
  pool: DatabasePool;
  pgPool: pg.Pool;
  storage: Storage;
}

export interface BuildResult {
  status: "built" | "already_built" | "deleted" | "gone";
  size?: number;
}

/**
 * Builds the zip of generation `generationId` into storage, expiring after `ttlHours`.
 * Idempotent: a ready archive whose file exists is left alone; a deleted one is not rebuilt.
 */
export async function buildArchive({ pool, pgPool, storage }: ArchiveDeps, generationId: number, ttlHours: number): Promise<BuildResult> {
  const archive = await findArchive(pool, generationId);
  if (!archive) return { status: "gone" };
  if (archive.deleted_at) return { status: "deleted" };
  if (archive.status === "ready" && archive.file_path && (await storage.stat(archive.file_path))) {
    return { status: "already_built", size: archive.file_size ?? 0 };
  }
  // A fresh key per build: two builds of one archive (a retry racing a rebuild on demand)
  // never write the same storage file; the last one to finish wins and removes the other's.
  const key = archiveKey(generationId, randomBytes(6).toString("hex"));
  const expiresAt = new Date(Date.now() + ttlHours * 3600_000);
  const zip = createZipStream(entries(pgPool, generationId), { mtime: archive.generated_at, portable: true });
  const info = await storage.put(key, zip, { contentType: "application/zip", expiresAt });
  const updated = await pool.maybeOne(sql.type(z.object({ previous: z.string().nullable() }))`
    update project_archives a set status = 'ready', file_path = ${key}, file_size = ${info.size}, expires_at = ${expiresAt.toISOString()}
    from (select id, file_path from project_archives where id = ${archive.id} for update) old
    where a.id = old.id and a.deleted_at is null
    returning old.file_path as previous`);
  if (!updated) {
    await storage.delete(key); // deleted while it was being built
    return { status: "deleted" };
  }
  if (updated.previous && updated.previous !== key) await storage.delete(updated.previous);
  return { status: "built", size: info.size };
}

/** Marks an archive failed (its build job gave up). */
export async function markArchiveFailed(conn: CommonQueryMethods, generationId: number): Promise<void> {
  await conn.query(sql.type(ignoredRow)`update project_archives set status = 'failed' where code_generation_id = ${generationId} and status = 'building'`);
}

/** Removes an archive's zip from storage and marks it deleted; resolves to whether it was live. */
export async function removeArchive(pool: DatabasePool, storage: Storage, archive: Pick<ArchiveRow, "id" | "file_path">): Promise<boolean> {
  const marked = await pool.maybeOne(sql.type(z.object({ id: z.number() }))`
    update project_archives set deleted_at = now() where id = ${archive.id} and deleted_at is null returning id`);
  if (archive.file_path) await storage.delete(archive.file_path);
  return marked !== null;
}
