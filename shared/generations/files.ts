/**
 * The files of a code generation, read back in path order in small batches so that a
 * deployment or an archive build never holds a whole generation in memory.
 */
import type pg from "pg";
import { z } from "zod";
import { copyOutRows } from "../db/copyOut.ts";
import { sql, type CommonQueryMethods } from "../db/pool.ts";
import type { DeployFile } from "../deploy/types.ts";

const fileRow = z.object({ path: z.string(), content: z.instanceof(Buffer) });

/** How many files one query reads. */
const BATCH = 100;

/**
 * Yields the files of generation `generationId` in path order. The next batch is read while
 * the caller works through the current one (at most two batches in memory), so a consumer
 * such as the archive build never waits for a round trip between batches.
 */
export async function* generationFiles(conn: CommonQueryMethods, generationId: number): AsyncGenerator<DeployFile> {
  const read = (after: string | null): Promise<readonly DeployFile[]> =>
    conn.any(sql.type(fileRow)`
      select path, content from code_generation_files
      where code_generation_id = ${generationId} ${after === null ? sql.fragment`` : sql.fragment`and path > ${after}`}
      order by path limit ${BATCH}`);
  let rows = await read(null);
  for (;;) {
    const next = rows.length < BATCH ? null : read(rows[rows.length - 1]!.path);
    next?.catch(() => {}); // awaited below; this only silences one abandoned by an early return
    yield* rows;
    if (!next) return;
    rows = await next;
  }
}

/** The paths of generation `generationId` in path order, without contents (to check them before a deployment writes anything). */
export async function generationPaths(conn: CommonQueryMethods, generationId: number): Promise<readonly string[]> {
  return conn.anyFirst(sql.type(z.object({ path: z.string() }))`
    select path from code_generation_files where code_generation_id = ${generationId} order by path`);
}

/**
 * The same files in the same order, read with one binary COPY on a plain `pg` pool
 * (shared/db/copyOut.ts): contents arrive as bytes rather than hex text, in one consistent
 * snapshot, at most ~256 KiB ahead of the consumer. The archive build reads this way.
 */
export async function* generationFilesCopied(pgPool: pg.Pool, generationId: number): AsyncGenerator<DeployFile> {
  if (!Number.isSafeInteger(generationId)) throw new RangeError(`A generation id must be an integer, got ${generationId}.`);
  // COPY takes no parameters; the id is an integer, checked above.
  const text = `copy (select path, content from code_generation_files where code_generation_id = ${generationId} order by path) to stdout (format binary)`;
  for await (const [path, content] of copyOutRows(pgPool, text)) yield { path: path!.toString("utf8"), content: content! };
}
