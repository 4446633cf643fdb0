/**
 * The three-way merge that re-applies one adjustment to a new generation (node-diff3):
 * base = the generated file the adjustment was made on, ours = the file as adjusted,
 * theirs = the file in the new generation. Lines keep their own line endings, so CRLF files
 * and a missing final newline survive the merge byte for byte.
 *
 * Speed: node-diff3 aligns whole files with its LCS, which costs milliseconds on a few
 * hundred lines full of repeated lines (braces, blank lines). So each side is aligned with
 * the base on the lines between their common prefix and suffix only (node-diff3's two-way
 * diff), the changed ranges of the base are grouped into regions as diff3 groups them
 * (overlapping or touching changes form one region), and node-diff3's three-way merge runs
 * only on the regions both sides changed, on those lines alone. A region one side changed
 * takes that side; the rest is the base. The test compares this with node-diff3 over whole
 * files on random edits. Before any of that, the usual case (the edit and the template's
 * change lie apart) is told from the texts' common prefix and suffix alone and answered by
 * splicing (`spliceApart`): no lines are split at all.
 *
 * Outcomes:
 * - `already_present`: theirs holds the adjustment already (the merge changes nothing);
 * - `applied`: the merge is clean and changes theirs;
 * - `conflict`: both sides changed the same lines; the file carries diff3-style markers
 *   (`<<<<<<<` adjustment, `|||||||` base, `=======`, `>>>>>>>` new generation), one block per
 *   conflict, and `conflicts` counts the blocks.
 */
import { diff3Merge, diffIndices, type MergeRegion } from "node-diff3";

export type MergeStatus = "applied" | "already_present" | "conflict";

/** The result of merging one adjustment. */
export interface MergeOutcome {
  status: MergeStatus;
  /** The file's new content. */
  content: string;
  /** Conflict blocks in `content`. */
  conflicts: number;
}

/** Labels of the conflict markers. */
export interface MergeLabels {
  ours: string;
  base: string;
  theirs: string;
}

/** Splits a text into lines that keep their terminators (`"a\r\n"`, `"b\n"`, a last `"c"`). */
export function splitLines(text: string): string[] {
  const lines: string[] = [];
  let start = 0;
  for (;;) {
    const end = text.indexOf("\n", start);
    if (end < 0) break;
    lines.push(text.slice(start, end + 1));
    start = end + 1;
  }
  if (start < text.length) lines.push(text.slice(start));
  return lines;
}

/** The lines of a conflict side, the last one ended so that a marker starts a line. */
function side(lines: string[], newline: string): string {
  const text = lines.join("");
  return text === "" || text.endsWith("\n") ? text : text + newline;
}

/** Merges `ours` (the adjustment) into `theirs` (the new file), both derived from `base`. */
export function mergeAdjustment(base: string, ours: string, theirs: string, labels: MergeLabels): MergeOutcome {
  // The common cases need no merge at all.
  if (theirs === ours) return { status: "already_present", content: theirs, conflicts: 0 };
  if (theirs === base) return { status: "applied", content: ours, conflicts: 0 };
  if (ours === base) return { status: "already_present", content: theirs, conflicts: 0 };
  const apart = spliceApart(base, ours, theirs);
  if (apart !== null) return { status: apart === theirs ? "already_present" : "applied", content: apart, conflicts: 0 };
  const newline = theirs.includes("\r\n") ? "\r\n" : "\n";
  const parts: string[] = [];
  let conflicts = 0;
  walkMerge(splitLines(ours), splitLines(base), splitLines(theirs), {
    take(lines, from, to) {
      for (let k = from; k < to; k += 1) parts.push(lines[k]!);
    },
    conflict({ a, o, b }) {
      conflicts += 1;
      const previous = parts[parts.length - 1];
      if (previous !== undefined && !previous.endsWith("\n")) parts.push(newline);
      parts.push(
        `<<<<<<< ${labels.ours}${newline}${side(a, newline)}`,
        `||||||| ${labels.base}${newline}${side(o, newline)}`,
        `=======${newline}${side(b, newline)}`,
        `>>>>>>> ${labels.theirs}${newline}`,
      );
    },
  });
  const content = parts.join("");
  if (conflicts > 0) return { status: "conflict", content, conflicts };
  return content === theirs ? { status: "already_present", content, conflicts: 0 } : { status: "applied", content, conflicts: 0 };
}

/**
 * Steps of the common prefix and suffix scans, largest first: equal slices are compared
 * natively (a memory compare), so the scans cost a few dozen compares instead of a loop over
 * every character.
 */
const STEPS = [1024, 256, 64, 16, 4, 1];

/** The length of the longest common prefix of `a` and `b`, at most `limit`. */
function commonPrefix(a: string, b: string, limit: number): number {
  let i = 0;
  for (const step of STEPS) while (i + step <= limit && a.slice(i, i + step) === b.slice(i, i + step)) i += step;
  return i;
}

/** The length of the longest common suffix of `a` and `b`, at most `limit`. */
function commonSuffix(a: string, b: string, limit: number): number {
  let n = 0;
  for (const step of STEPS) {
    while (n + step <= limit && a.slice(a.length - n - step, a.length - n) === b.slice(b.length - n - step, b.length - n)) n += step;
  }
  return n;
}

/**
 * The whole lines in which `x` differs from `o`: `o[start, oEnd)` became `x[start, xEnd)`
 * (character offsets at line starts), the longest common line prefix and suffix set aside.
 */
function changedLines(o: string, x: string): { start: number; oEnd: number; xEnd: number } {
  const prefix = commonPrefix(o, x, Math.min(o.length, x.length));
  const start = prefix === 0 ? 0 : o.lastIndexOf("\n", prefix - 1) + 1;
  const suffix = commonSuffix(o, x, Math.min(o.length, x.length) - start);
  let oEnd = o.length - suffix;
  const lineStart = (text: string, at: number) => at === 0 || text.charCodeAt(at - 1) === 10;
  if (suffix > 0 && !(lineStart(o, oEnd) && lineStart(x, oEnd + x.length - o.length))) {
    // Past the first line end inside the common suffix, both texts start a line.
    const newline = o.indexOf("\n", oEnd);
    oEnd = newline < 0 ? o.length : newline + 1;
  }
  return { start, oEnd, xEnd: oEnd + x.length - o.length };
}

/**
 * The merge when ours and theirs changed lines apart from each other (at least one unchanged
 * line between): the result is each side's change spliced into the other, which is what
 * diff3 makes of it, found with a few native string compares instead of a line alignment.
 * Null when the changes overlap or touch, so the line merge decides.
 */
function spliceApart(base: string, ours: string, theirs: string): string | null {
  const a = changedLines(base, ours);
  const b = changedLines(base, theirs);
  // Base, ours and theirs agree outside the changed lines, so either side's text serves there.
  if (a.oEnd < b.start) return ours.slice(0, a.xEnd) + theirs.slice(a.oEnd);
  if (b.oEnd < a.start) return theirs.slice(0, b.xEnd) + ours.slice(b.oEnd);
  return null;
}

/** `o[oStart, oEnd)` replaced by `x[xStart, xEnd)`. */
interface Hunk {
  oStart: number;
  oEnd: number;
  xStart: number;
  xEnd: number;
}

/**
 * The changes from `o` to `x` (node-diff3's own two-way diff), after the common prefix and
 * suffix are set aside: an edit touches a few lines, so the diff runs on those alone.
 */
function hunksOf(o: string[], x: string[]): Hunk[] {
  let prefix = 0;
  while (prefix < o.length && prefix < x.length && o[prefix] === x[prefix]) prefix += 1;
  let suffix = 0;
  while (suffix < o.length - prefix && suffix < x.length - prefix && o[o.length - 1 - suffix] === x[x.length - 1 - suffix]) suffix += 1;
  const middle = diffIndices(o.slice(prefix, o.length - suffix), x.slice(prefix, x.length - suffix));
  return middle.map((d) => ({ oStart: prefix + d.buffer1[0], oEnd: prefix + d.buffer1[0] + d.buffer1[1], xStart: prefix + d.buffer2[0], xEnd: prefix + d.buffer2[0] + d.buffer2[1] }));
}

/** The range of `x` that stands for `o[oStart, oEnd)`, given x's hunks inside it. */
function rangeOf(hunks: Hunk[], oStart: number, oEnd: number, offset: number): [number, number] {
  if (hunks.length === 0) return [oStart + offset, oEnd + offset];
  const first = hunks[0]!;
  const last = hunks[hunks.length - 1]!;
  return [first.xStart - (first.oStart - oStart), last.xEnd + (oEnd - last.oEnd)];
}

/** Receives a merge as it is walked: lines taken as they are, and conflicts. */
interface MergeSink {
  /** `lines[from, to)` go into the result unchanged. */
  take(lines: string[], from: number, to: number): void;
  conflict(region: NonNullable<MergeRegion<string>["conflict"]>): void;
}

/**
 * Walks diff3's merge of `a` (ours) and `b` (theirs) over `o` (base), with node-diff3
 * merging the regions both changed (see the module comment).
 */
function walkMerge(a: string[], o: string[], b: string[], sink: MergeSink): void {
  const sides = [hunksOf(o, a), hunksOf(o, b)] as const;
  const all = [...sides[0].map((h) => ({ h, side: 0 })), ...sides[1].map((h) => ({ h, side: 1 }))].sort((x, y) => x.h.oStart - y.h.oStart || x.side - y.side);
  // Where each side's next unconsumed hunk is, and the side's offset (x index − o index) before it.
  const next = [0, 0];
  const offset = [0, 0];
  let oAt = 0;
  for (let i = 0; i < all.length; ) {
    // A region: hunks that overlap or touch, from either side.
    const start = all[i]!.h.oStart;
    let end = all[i]!.h.oEnd;
    let j = i + 1;
    while (j < all.length && all[j]!.h.oStart <= end) end = Math.max(end, all[j++]!.h.oEnd);
    sink.take(o, oAt, start);
    const inRegion = [0, 1].map((side) => {
      const list = sides[side as 0 | 1];
      const first = next[side]!;
      let k = first;
      while (k < list.length && list[k]!.oStart <= end && list[k]!.oStart >= start) k += 1;
      next[side] = k;
      return list.slice(first, k);
    });
    const [aFrom, aTo] = rangeOf(inRegion[0]!, start, end, offset[0]!);
    const [bFrom, bTo] = rangeOf(inRegion[1]!, start, end, offset[1]!);
    if (inRegion[1]!.length === 0) sink.take(a, aFrom, aTo);
    else if (inRegion[0]!.length === 0) sink.take(b, bFrom, bTo);
    else if (aTo - aFrom === bTo - bFrom && a.slice(aFrom, aTo).every((line, k) => line === b[bFrom + k])) sink.take(a, aFrom, aTo);
    else {
      for (const region of diff3Merge(a.slice(aFrom, aTo), o.slice(start, end), b.slice(bFrom, bTo), { excludeFalseConflicts: true })) {
        if (region.ok) sink.take(region.ok, 0, region.ok.length);
        else sink.conflict(region.conflict!);
      }
    }
    offset[0] = aTo - end;
    offset[1] = bTo - end;
    oAt = end;
    i = j;
  }
  sink.take(o, oAt, o.length);
}

/** diff3's merge regions of `a` (ours) and `b` (theirs) over `o` (base); adjacent `ok` regions are joined. */
export function mergeRegions(a: string[], o: string[], b: string[]): MergeRegion<string>[] {
  const regions: MergeRegion<string>[] = [];
  walkMerge(a, o, b, {
    take(lines, from, to) {
      if (from >= to) return;
      const last = regions[regions.length - 1];
      const target = last?.ok ?? [];
      for (let k = from; k < to; k += 1) target.push(lines[k]!);
      if (!last?.ok) regions.push({ ok: target });
    },
    conflict(region) {
      regions.push({ conflict: region });
    },
  });
  return regions;
}
