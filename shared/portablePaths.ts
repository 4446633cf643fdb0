/**
 * Portable output paths: the rules a relative path of generated code must meet, beyond staying
 * inside its folder, to land as the same file on every system it is unpacked, deployed or
 * committed to. The template engine, the archive writer, the deployers and the upload form
 * apply them (docs/decisions.md, "Output paths").
 *
 * Glossary: a *segment* is one `/`-separated part of a path; its *stem* is the part before its
 * first dot (`nul` in `nul.tar.gz`), which is what Windows compares with its device names.
 *
 * - No `.git` segment, in any case, nor a spelling that git itself treats as `.git` on
 *   NTFS (`git~1`, the 8.3 short name) or HFS+ (with zero-width characters inside): a
 *   generated `.git/hooks/…` or `.git/config` would run code on the machine of whoever unpacks,
 *   deploys or commits it. (`.git.` and `.git ` fall to the next rule.)
 * - No segment ending in `.` or a space (Windows drops them, so `a.` and `a` are one file).
 * - No Windows device name as a stem: CON, PRN, AUX, NUL, COM1–COM9, LPT1–LPT9 (also with
 *   the superscript digits ¹²³ Windows counts as digits), in any case, with or without an
 *   extension, trailing spaces before the extension included.
 * - None of the characters Windows cannot store: `< > : " | ? *`.
 * - No two paths of one output that differ only in case, whether in their file names or in
 *   a folder (`Models/a.ts` and `models/b.ts`), and no file whose path is another one's folder:
 *   macOS and Windows would make them one file (CaseFolds).
 */

const windowsForbidden = /[<>:"|?*]/;
// Code points HFS+ ignores when it compares names (git's next_hfs_char skips the same ones).
const hfsIgnored = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;

/** Whether `segment` is `.git` as git on NTFS or HFS+ would see it (trailing dots and spaces are refused on their own). */
function isDotGit(segment: string): boolean {
  const folded = segment.length >= 5 ? segment.replace(hfsIgnored, "").toLowerCase() : segment.toLowerCase();
  return folded === ".git" || folded === "git~1";
}

/**
 * Whether the `length` characters of `s` from `at` are a Windows device name, in any case: CON,
 * PRN, AUX, NUL, COM1–COM9, LPT1–LPT9 (also with the superscript digits ¹²³ Windows counts as
 * digits). Character codes, no string: the template engine asks it of every plain file-name value.
 */
export function isDeviceName(s: string, at: number, length: number): boolean {
  if (length !== 3 && length !== 4) return false;
  const a = s.charCodeAt(at) | 32;
  const b = s.charCodeAt(at + 1) | 32;
  const c = s.charCodeAt(at + 2) | 32;
  if (length === 3) return (a === 99 && b === 111 && c === 110) || (a === 112 && b === 114 && c === 110) || (a === 97 && b === 117 && c === 120) || (a === 110 && b === 117 && c === 108);
  const d = s.charCodeAt(at + 3);
  return ((d >= 49 && d <= 57) || d === 0xb9 || d === 0xb2 || d === 0xb3) && ((a === 99 && b === 111 && c === 109) || (a === 108 && b === 112 && c === 116));
}

/** Whether the stem of `segment` is a Windows device name. */
function isDevice(segment: string): boolean {
  const dot = segment.indexOf(".");
  const stem = (dot === -1 ? segment : segment.slice(0, dot)).trimEnd();
  return isDeviceName(stem, 0, stem.length);
}

/**
 * Why one path segment is not portable, or null when it is. The segment is already known to
 * be non-empty, not `.` or `..` and free of control characters and `/`.
 */
export function segmentProblem(segment: string): string | null {
  if (isDotGit(segment)) return `\`${segment}\` is a git folder name: a generated file may not write into a repository's .git`;
  const last = segment.charCodeAt(segment.length - 1);
  if (last === 46 /* . */ || last === 32 /* space */) return `\`${segment}\` ends in a dot or a space, which Windows drops`;
  if (isDevice(segment)) return `\`${segment}\` is a Windows device name (CON, PRN, AUX, NUL, COM1–9, LPT1–9), even with an extension`;
  const bad = windowsForbidden.exec(segment);
  if (bad) return `\`${segment}\` holds \`${bad[0]}\`, which Windows cannot store in a file name (< > : " | ? *)`;
  return null;
}

/** Whether the character code `c` is, lower-cased, `want` (an ASCII letter's lower-case code). */
const letter = (c: number, want: number) => (c | 32) === want;

/**
 * Whether the `length` characters of `s` from `at` may be a device name or `git~1`, by their
 * first letter and count: most stems are not, and this costs no string.
 */
export function deviceLike(s: string, at: number, length: number): boolean {
  const c = s.charCodeAt(at) | 32;
  if (length === 3 || length === 4) return c === 99 /* c */ || c === 112 /* p */ || c === 97 /* a */ || c === 110 /* n */ || c === 108; /* l */
  return length === 5 && c === 103 /* g */ && letter(s.charCodeAt(at + 1), 105 /* i */) && s.charCodeAt(at + 3) === 126; /* git~ */
}

/**
 * Whether a segment may need segmentProblem at all: a stem that may be a device name or
 * `git~1`, a leading dot, a trailing dot or space. (Characters that need a closer look are
 * found by the caller's loop.)
 */
function suspicious(path: string, start: number, end: number, firstDot: number): boolean {
  if (path.charCodeAt(start) === 46 /* . */) return true;
  const last = path.charCodeAt(end - 1);
  return last === 46 || last === 32 || deviceLike(path, start, (firstDot === -1 ? end : firstDot) - start);
}

/**
 * Why `path` (already normalised: relative, `/`-separated, no empty, `.` or `..` segment) is
 * not portable, or null. A character loop that looks closer only at segments that could be a
 * problem, since it runs for every generated file.
 */
export function portablePathProblem(path: string): string | null {
  const n = path.length;
  let start = 0;
  let firstDot = -1;
  for (let i = 0; i <= n; i++) {
    const c = i < n ? path.charCodeAt(i) : 47;
    if (c === 47 /* / */) {
      if (suspicious(path, start, i, firstDot)) {
        const problem = segmentProblem(path.slice(start, i));
        if (problem !== null) return problem;
      }
      start = i + 1;
      firstDot = -1;
    } else if (c === 46 /* . */) {
      if (firstDot === -1) firstDot = i;
    } else if (c < 45 || c === 58 || c === 60 || c === 62 || c === 63 || c === 124 || c > 126) {
      // Space and the punctuation below `-` (`"`, `*`, …), `:`, `<`, `>`, `?`, `|`, and anything
      // beyond ASCII (HFS+ ignorables): the whole segment gets the full check.
      const slash = path.indexOf("/", i);
      const end = slash === -1 ? n : slash;
      const problem = segmentProblem(path.slice(start, end));
      if (problem !== null) return problem;
      start = end + 1;
      firstDot = -1;
      i = end;
    }
  }
  return null;
}

/**
 * The paths of one output compared as case-insensitive file systems compare them. `add`
 * answers the earlier path a new one clashes with: same letters in another case, or one
 * path's folder is the other's file (or the same folder spelled in another case).
 */
export class CaseFolds {
  /** Lower-cased file paths and folder paths → the path that first used them (folders end in `/`). */
  private readonly seen = new Map<string, string>();

  /** Records `path`; returns the earlier path it clashes with, or null. */
  add(path: string): string | null {
    const folded = path.toLowerCase();
    const file = this.seen.get(folded) ?? this.seen.get(`${folded}/`);
    if (file !== undefined) return file;
    // Each folder of the path: spelled as an earlier file, or in another case than before.
    const added: string[] = [];
    for (let slash = path.indexOf("/"); slash !== -1; slash = path.indexOf("/", slash + 1)) {
      const folder = folded.slice(0, slash);
      const asFile = this.seen.get(folder);
      if (asFile !== undefined) return asFile;
      const earlier = this.seen.get(`${folder}/`);
      if (earlier === undefined) added.push(`${folder}/`);
      else if (!earlier.startsWith(path.slice(0, slash + 1))) return earlier;
    }
    // Recorded only once the path is accepted: a refused path is named by no later message.
    for (const folder of added) this.seen.set(folder, path);
    this.seen.set(folded, path);
    return null;
  }
}

/** Why `path` and the `earlier` path CaseFolds found cannot both be written. */
export function caseClash(path: string, earlier: string): string {
  if (path.toLowerCase() === earlier.toLowerCase()) return `\`${earlier}\` and \`${path}\` differ only in case: on macOS and Windows they are one file`;
  const [short, long] = path.length < earlier.length ? [path, earlier] : [earlier, path];
  if (long.startsWith(`${short}/`)) return `\`${short}\` is both a file and a folder (\`${long}\`)`;
  return `\`${earlier}\` and \`${path}\` clash on macOS and Windows: a folder of one differs only in case from the other's file or folder`;
}
