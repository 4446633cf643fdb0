/**
 * The files of a code generation, read back in path order in small batches so that a
 * deployment or an archive build never holds a whole generation in memory.
 */
import { z } from "zod";
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
