/**
 * The adjustment engine without a database: diffs made from an edited file and read from a
 * user's diff (refusals name the hunk), and the three-way merge with its four outcomes,
 * byte-exact line endings, and adjustments of one file stacking.
 */
import { applyPatch } from "diff";
import t from "tap";
import { mergeAll } from "../../../shared/adjustments/apply.ts";
import { applyDiff, diffOf, diffStats, DiffRejected } from "../../../shared/adjustments/diffs.ts";
import { mergeAdjustment, mergeRegions, splitLines } from "../../../shared/adjustments/merge.ts";
import { diff3Merge, type MergeRegion } from "node-diff3";

const lines = (n: number, tag = "line") => Array.from({ length: n }, (_, i) => `${tag} ${i + 1}\n`).join("");
const labels = { ours: "adjustment #1", base: "generation #1", theirs: "generation #2" };
const replaceLine = (text: string, n: number, by: string) => splitLines(text).map((line, i) => (i === n - 1 ? by : line)).join("");

t.test("splitLines keeps every byte", async (t) => {
  for (const text of ["", "a", "a\n", "a\r\nb\r\n", "a\nb", "\n\n", "x\r\ny"]) t.equal(splitLines(text).join(""), text);
  t.same(splitLines("a\r\nb"), ["a\r\n", "b"]);
});

t.test("diffs from an edited file round-trip through jsdiff", async (t) => {
  const base = lines(20);
  const adjusted = replaceLine(base, 10, "line ten, edited\n");
  const diff = diffOf("src/a.ts", base, adjusted);
  t.match(diff, /^--- a\/src\/a\.ts\n\+\+\+ b\/src\/a\.ts\n/m);
  t.same(diffStats(diff), { additions: 1, deletions: 1 });
  t.equal(applyPatch(base, diff), adjusted);
  t.equal(applyDiff("src/a.ts", base, diff), adjusted, "a diff made here is accepted back");
});

t.test("a user's diff: the hunk that does not apply is named", async (t) => {
  const base = lines(40);
  const adjusted = replaceLine(replaceLine(base, 5, "five\n"), 30, "thirty\n");
  const diff = diffOf("a.txt", base, adjusted);
  const stale = diff.replace("-line 30\n", "-line 31 (not there)\n");
  t.throws(() => applyDiff("a.txt", base, stale), { name: "DiffRejected", message: /^Hunk 2 of 2 \(@@ -27,7 \+27,7 @@\) does not apply to a\.txt/ });
  t.throws(() => applyDiff("b.txt", base, diff), { message: "The diff is for a.txt, not b.txt." });
  t.throws(() => applyDiff("a.txt", base, "hello\n"), DiffRejected);
  t.throws(() => applyDiff("a.txt", base, `${diff}${diffOf("c.txt", "x\n", "y\n")}`), { message: /changes 2 files/ });
  t.throws(() => applyDiff("a.txt", base, "@@ -1,2 +1,2 @@\n-a\n"), DiffRejected, "a malformed hunk");
  const bare = diff.replace(/^--- .*\n\+\+\+ .*\n/m, "");
  t.equal(applyDiff("a.txt", base, bare), adjusted, "a diff without file names applies");
});

t.test("merge outcomes", async (t) => {
  const base = lines(30);
  const ours = replaceLine(base, 3, "ours 3\n");
  t.same(mergeAdjustment(base, ours, base, labels), { status: "applied", content: ours, conflicts: 0 }, "unchanged file: the adjustment");
  t.same(mergeAdjustment(base, ours, ours, labels), { status: "already_present", content: ours, conflicts: 0 });

  const theirs = replaceLine(base, 25, "theirs 25\n");
  const clean = mergeAdjustment(base, ours, theirs, labels);
  t.equal(clean.status, "applied");
  t.equal(clean.content, replaceLine(theirs, 3, "ours 3\n"), "both changes, apart");
  t.equal(mergeAdjustment(base, ours, clean.content, labels).status, "already_present", "applied twice: already present");

  const clash = replaceLine(base, 3, "theirs 3\n");
  const conflict = mergeAdjustment(base, ours, clash, labels);
  t.equal(conflict.status, "conflict");
  t.equal(conflict.conflicts, 1);
  t.match(conflict.content, "line 2\n<<<<<<< adjustment #1\nours 3\n||||||| generation #1\nline 3\n=======\ntheirs 3\n>>>>>>> generation #2\nline 4\n");

  const same = mergeAdjustment(base, ours, replaceLine(clash, 3, "ours 3\n") + "tail\n", labels);
  t.equal(same.status, "already_present", "the same change on both sides is no conflict");
});

t.test("line endings and a missing final newline survive", async (t) => {
  const base = "a\r\nb\r\nc\r\nd\r\ne";
  const ours = "a\r\nB\r\nc\r\nd\r\ne";
  const theirs = "a\r\nb\r\nc\r\nd\r\nE";
  t.same(mergeAdjustment(base, ours, theirs, labels), { status: "applied", content: "a\r\nB\r\nc\r\nd\r\nE", conflicts: 0 });
  const conflict = mergeAdjustment("x\ny", "x\nY", "x\nZ", labels);
  t.equal(conflict.status, "conflict");
  t.equal(conflict.content, "x\n<<<<<<< adjustment #1\nY\n||||||| generation #1\ny\n=======\nZ\n>>>>>>> generation #2\n", "markers start their own lines");
});

t.test("mergeAll: adjustments of one file stack, a missing file is reported", async (t) => {
  const base = lines(30);
  const first = { id: 1, file_path: "a.txt", base_content: base, adjusted_content: replaceLine(base, 2, "two\n"), base_generation_id: 1 };
  const later = replaceLine(base, 29, "generated 29\n");
  const second = { id: 2, file_path: "a.txt", base_content: first.adjusted_content, adjusted_content: replaceLine(first.adjusted_content, 15, "fifteen\n"), base_generation_id: 2 };
  const gone = { id: 3, file_path: "b.txt", base_content: "b\n", adjusted_content: "B\n", base_generation_id: 1 };
  const { results, changed } = mergeAll([first, second, gone], new Map([["a.txt", later]]), 3);
  t.same(results.map((r) => [r.adjustment_id, r.status]), [[1, "applied"], [2, "applied"], [3, "file_missing"]]);
  t.equal(changed.get("a.txt"), replaceLine(replaceLine(later, 2, "two\n"), 15, "fifteen\n"));
});

t.test("windowed regions equal node-diff3's over whole files (unique lines, random edits)", async (t) => {
  let seed = 7;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  let fresh = 0;
  const edit = (lines: string[]) => {
    const out = [...lines];
    for (let k = random(4); k >= 0; k -= 1) {
      const at = random(out.length + 1);
      const kind = random(3);
      if (kind === 0) out.splice(at, 1 + random(3));
      else if (kind === 1) out.splice(at, 0, ...Array.from({ length: 1 + random(3) }, () => `new ${fresh++}\n`));
      else out.splice(at, 1 + random(2), `changed ${fresh++}\n`);
    }
    return out;
  };
  const joined = (regions: MergeRegion<string>[]) => {
    const out: MergeRegion<string>[] = [];
    for (const region of regions) {
      const last = out[out.length - 1];
      if (region.ok && last?.ok) last.ok = [...last.ok, ...region.ok];
      else if (!region.ok || region.ok.length) out.push(region.ok ? { ok: [...region.ok] } : { conflict: { ...region.conflict!, aIndex: 0, oIndex: 0, bIndex: 0 } });
    }
    return out;
  };
  let conflicts = 0;
  for (let round = 0; round < 300; round += 1) {
    const o = Array.from({ length: 5 + random(40) }, (_, i) => `line ${round}.${i}\n`);
    const a = edit(o);
    const b = edit(o);
    const expected = joined(diff3Merge(a, o, b, { excludeFalseConflicts: true }));
    const actual = joined(mergeRegions(a, o, b));
    if (expected.some((r) => r.conflict)) conflicts += 1;
    t.same(actual, expected, `round ${round}`);
  }
  t.ok(conflicts > 30, `${conflicts} of 300 rounds had conflicts`);
});

t.test("the splice of changes apart equals the line merge (repeated lines, CRLF, no final newline)", async (t) => {
  let seed = 11;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  // Few distinct lines, so prefixes, suffixes and alignments are ambiguous, as braces and blank lines make them.
  const pool = ["}\n", "\n", "  x();\n", "{\n", "a\r\n", "b\r\n", "ab\n"];
  const edit = (lines: string[]) => {
    const out = [...lines];
    for (let k = random(3); k >= 0; k -= 1) {
      const at = random(out.length + 1);
      const kind = random(3);
      if (kind === 0) out.splice(at, 1 + random(2));
      else if (kind === 1) out.splice(at, 0, ...Array.from({ length: 1 + random(2) }, () => pool[random(pool.length)]!));
      else out.splice(at, 1, pool[random(pool.length)]!);
    }
    return out;
  };
  const text = (lines: string[], open: boolean) => (open && lines.length ? lines.join("").replace(/\r?\n$/, "") : lines.join(""));
  let spliced = 0;
  for (let round = 0; round < 2000; round += 1) {
    const o = Array.from({ length: 3 + random(30) }, () => pool[random(pool.length)]!);
    const open = random(4) === 0;
    const [base, ours, theirs] = [o, edit(o), edit(o)].map((lines) => text(lines, open)) as [string, string, string];
    const regions = mergeRegions(splitLines(ours), splitLines(base), splitLines(theirs));
    const outcome = mergeAdjustment(base, ours, theirs, labels);
    if (regions.some((r) => r.conflict)) {
      t.equal(outcome.status, "conflict", `round ${round}: a conflict`);
      continue;
    }
    const expected = regions.map((r) => r.ok!.join("")).join("");
    if (outcome.status === "conflict") {
      t.fail(`round ${round}: no conflict expected`);
      continue;
    }
    if (expected !== outcome.content) t.equal(outcome.content, expected, `round ${round}`);
    if (ours !== base && theirs !== base && ours !== theirs) spliced += 1;
  }
  t.ok(spliced > 300, `${spliced} rounds merged two real changes without a conflict`);
});
