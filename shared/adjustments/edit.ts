/**
 * Turning what a user sends (the edited file, or a unified diff) into an adjustment's edit of
 * a generated file, with 422 answers that name the field at fault.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";
import { invalid } from "../errors.ts";
import { applyDiff, diffOf, diffStats, DiffRejected } from "./diffs.ts";

/** What an adjustment stores of an edit. */
export interface AdjustmentEdit {
  adjustedContent: string;
  diff: string;
  additions: number;
  deletions: number;
}

const strict = new TextDecoder("utf-8", { fatal: true });

/**
 * The text of the file at `path` in generation `generationId`.
 * @throws 422 on `file_path` when there is no such file or it is not UTF-8 text.
 */
export async function generatedText(conn: CommonQueryMethods, generationId: number, path: string): Promise<string> {
  const content = await conn.maybeOneFirst(sql.type(z.object({ content: z.instanceof(Buffer) }))`
    select content from code_generation_files where code_generation_id = ${generationId} and path = ${path}`);
  if (content === null) throw invalid({ file_path: [`Code generation ${generationId} has no file ${path}.`] });
  try {
    return strict.decode(content);
  } catch {
    throw invalid({ file_path: [`${path} is not a UTF-8 text file; only text files can be adjusted.`] });
  }
}

/**
 * The edit of `base` that `input` describes: the new content (diffed here) or a unified diff
 * (applied here, hunk by hunk).
 * @throws 422 on `content` (no change) or `diff` (unreadable, another file, a hunk that does not apply).
 */
export function editOf(path: string, base: string, input: { content?: string | undefined; diff?: string | undefined }): AdjustmentEdit {
  let adjusted: string;
  if (input.content !== undefined) {
    if (input.content === base) throw invalid({ content: ["The content is the same as the generated file; there is nothing to adjust."] });
    adjusted = input.content;
  } else {
    try {
      adjusted = applyDiff(path, base, input.diff ?? "");
    } catch (error) {
      if (error instanceof DiffRejected) throw invalid({ diff: [error.message] });
      throw error;
    }
  }
  const diff = diffOf(path, base, adjusted);
  return { adjustedContent: adjusted, diff, ...diffStats(diff) };
}
