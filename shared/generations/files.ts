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

/** Yields the files of generation `generationId` in path order. */
export async function* generationFiles(conn: CommonQueryMethods, generationId: number): AsyncGenerator<DeployFile> {
  let after: string | null = null;
  for (;;) {
    const rows: readonly DeployFile[] = await conn.any(sql.type(fileRow)`
      select path, content from code_generation_files
      where code_generation_id = ${generationId} ${after === null ? sql.fragment`` : sql.fragment`and path > ${after}`}
      order by path limit ${BATCH}`);
    yield* rows;
    if (rows.length < BATCH) return;
    after = rows[rows.length - 1]!.path;
  }
}
