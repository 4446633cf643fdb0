/**
 * Unified diffs of code adjustments (jsdiff): made from an edited file, or read from a diff a
 * user sends and checked against the generated file hunk by hunk, so a refusal names the hunk
 * that does not apply.
 *
 * Glossary: *base* is the generated file, *adjusted* the file as the user wants it.
 */
import { applyPatch, createTwoFilesPatch, FILE_HEADERS_ONLY, parsePatch, type StructuredPatch, type StructuredPatchHunk } from "diff";

/** A diff that cannot be used; `message` is meant for the user. */
export class DiffRejected extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DiffRejected";
  }
}

/** Lines of context around each change, as `diff -u` and git write them. */
const CONTEXT = 3;

/** The unified diff from `base` to `adjusted`, with git-style `a/` and `b/` file names. */
export function diffOf(path: string, base: string, adjusted: string): string {
  return createTwoFilesPatch(`a/${path}`, `b/${path}`, base, adjusted, undefined, undefined, { context: CONTEXT, headerOptions: FILE_HEADERS_ONLY });
}

/** Lines added and removed by a diff. */
export function diffStats(diff: string): { additions: number; deletions: number } {
  let additions = 0;
  let deletions = 0;
  for (const patch of parsePatch(diff)) {
    for (const hunk of patch.hunks) {
      for (const line of hunk.lines) {
        if (line.startsWith("+")) additions += 1;
        else if (line.startsWith("-")) deletions += 1;
      }
    }
  }
  return { additions, deletions };
}

/** `@@ -10,4 +10,5 @@` */
const hunkHeader = (hunk: StructuredPatchHunk) => `@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`;

/** A file name of a diff header without git's `a/` or `b/`, or null for none. */
function headerPath(name: string | undefined): string | null {
  if (!name || name === "/dev/null") return null;
  return name.replace(/^[ab]\//, "");
}

/**
 * Applies a user's unified diff of `path` to `base` and answers the adjusted file.
 * @throws DiffRejected: not a diff, several files, another file, no change, hunks out of order
 * or overlapping, or a hunk whose context or removed lines are not in `base` (named with its
 * header and number).
 */
export function applyDiff(path: string, base: string, diff: string): string {
  let patches: StructuredPatch[];
  try {
    patches = parsePatch(diff);
  } catch (error) {
    throw new DiffRejected(`The diff could not be read: ${(error as Error).message}.`);
  }
  const withHunks = patches.filter((patch) => patch.hunks.length > 0);
  if (withHunks.length === 0) throw new DiffRejected("The diff holds no hunk (@@ … @@ with changed lines).");
  if (withHunks.length > 1) throw new DiffRejected(`The diff changes ${withHunks.length} files; send one diff per file.`);
  const patch = withHunks[0]!;
  for (const name of [patch.oldFileName, patch.newFileName]) {
    const named = headerPath(name);
    if (named !== null && named !== path) throw new DiffRejected(`The diff is for ${named}, not ${path}.`);
  }
  // Hunks follow one another down the file, as diff writes them and patch requires: jsdiff
  // applies misordered or overlapping ones without complaint, duplicating lines.
  for (let i = 1; i < patch.hunks.length; i += 1) {
    const before = patch.hunks[i - 1]!;
    const hunk = patch.hunks[i]!;
    if (hunk.oldStart < before.oldStart + before.oldLines) {
      throw new DiffRejected(
        `Hunk ${i + 1} of ${patch.hunks.length} (${hunkHeader(hunk)}) starts before hunk ${i} (${hunkHeader(before)}) ends; hunks must follow one another down the file.`,
      );
    }
  }
  // Hunk by hunk, so the refusal can name the first one that does not fit.
  let applied: string | false = base;
  for (let i = 0; i < patch.hunks.length; i += 1) {
    applied = applyPatch(base, { ...patch, hunks: patch.hunks.slice(0, i + 1) });
    if (applied === false) {
      const hunk = patch.hunks[i]!;
      throw new DiffRejected(
        `Hunk ${i + 1} of ${patch.hunks.length} (${hunkHeader(hunk)}) does not apply to ${path}: its context and removed lines are not in the generated file${hunk.oldStart ? ` near line ${hunk.oldStart}` : ""}.`,
      );
    }
  }
  if (applied === base) throw new DiffRejected("The diff changes nothing in the generated file.");
  return applied;
}
