/**
 * Output paths: every generated file lands inside the output root, whatever its file name
 * template renders to. Paths are `/`-separated and relative; `.` segments are dropped; anything
 * that could leave the root or confuse an archive or a file system is refused rather than
 * repaired, so a template author sees the problem. That includes the portability rules of
 * shared/portablePaths.ts (no `.git`, no Windows device names or characters, no trailing dot).
 */
import { deviceLike, portablePathProblem } from "../portablePaths.ts";

/** An output or include path that is not a safe relative path. */
export class UnsafePathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UnsafePathError";
  }
}

const maxPath = 1024;
const maxSegment = 255;

/**
 * Fast path: true when `path` holds nothing to refuse or normalise: ASCII only (so already NFC),
 * no control character, backslash, empty, `.` or `..` segment, leading `/` or drive letter, and
 * short enough; and nothing the portability rules may refuse (a character Windows cannot store,
 * a leading dot, a trailing dot or space, a stem that may be a device name or `git~1`). Most
 * paths are like that, and a character loop is cheaper than the checks below.
 */
function isPlain(path: string): boolean {
  const n = path.length;
  if (n === 0 || n > maxSegment) return false;
  let start = 0;
  let dot = -1;
  for (let i = 0; i <= n; i++) {
    const c = i < n ? path.charCodeAt(i) : 47;
    if (c === 47 /* / */) {
      const len = i - start;
      if (len === 0 || path.charCodeAt(start) === 46 /* . */) return false;
      const last = path.charCodeAt(i - 1);
      if (last === 46 /* . */ || last === 32 || deviceLike(path, start, (dot === -1 ? i : dot) - start)) return false;
      start = i + 1;
      dot = -1;
    } else if (c === 46) {
      if (dot === -1) dot = i;
    } else if (c < 32 || c >= 127 || c === 92 /* \ */ || c === 58 /* : */ || c === 60 /* < */ || c === 62 /* > */ || c === 34 /* " */ || c === 124 /* | */ || c === 63 /* ? */ || c === 42 /* * */) return false;
  }
  return true;
}

/**
 * Whether every path a plain skeleton renders to is portable when each of its values is plain
 * (runtime.ts `Q`): `skeleton` is the file name with each placeholder as `\u0000`. Values hold
 * no dot, `~`, trailing space or character Windows refuses, and are not device names themselves;
 * so a segment with a value stays portable unless it starts with a dot (`.{:x:}` → `.git`),
 * holds a `~` (`{:x:}~1`) or has a stem that mixes a value with fewer than four other characters
 * (`c{:x:}` → `con`, `{:a:}{:b:}` → `com1`). Such rare names take the full check every time.
 */
export function valuesStayPortable(skeleton: string): boolean {
  for (const segment of skeleton.split("/")) {
    if (!segment.includes("\u0000")) continue;
    if (segment.startsWith(".") || segment.includes("~")) return false;
    const dot = segment.indexOf(".");
    const stem = dot === -1 ? segment : segment.slice(0, dot);
    if (stem.includes("\u0000") && stem !== "\u0000" && stem.replaceAll("\u0000", "").length < 4) return false;
  }
  return true;
}

/**
 * Normalises a relative path (`./a/./b.ts` → `a/b.ts`, Unicode NFC, so that the two spellings
 * of `é` are one path). The rules match the archive writer's (shared/archive/entryPath.ts) or
 * are stricter, so every path a template produces can be archived.
 * @throws UnsafePathError on absolute paths, `..`, backslashes, NUL and other control
 * characters (C0, DEL, C1), U+FFFD, empty segments, an over-long path, or a path that is not
 * portable (shared/portablePaths.ts).
 */
export function normalizePath(path: string): string {
  if (isPlain(path)) return path;
  if (typeof path !== "string" || path === "") throw new UnsafePathError("the path is empty");
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f]/.test(path)) throw new UnsafePathError("control characters (NUL, newline, …) are not allowed in a path");
  if (path.includes("\ufffd")) throw new UnsafePathError("the path holds U+FFFD (text that was not valid UTF-8)");
  path = path.normalize("NFC");
  if (path.includes("\\")) throw new UnsafePathError("backslashes are not allowed in a path (use `/`)");
  if (path.startsWith("/") || /^[A-Za-z]:/.test(path)) throw new UnsafePathError("absolute paths are not allowed");
  const kept: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "") throw new UnsafePathError("empty path segments (`//`, or a leading or trailing `/`) are not allowed");
    if (segment === ".") continue;
    if (segment === "..") throw new UnsafePathError("`..` is not allowed: paths must stay inside the output folder");
    if (segment.length > maxSegment) throw new UnsafePathError(`a path segment is longer than ${maxSegment} characters`);
    kept.push(segment);
  }
  const out = kept.join("/");
  if (out === "") throw new UnsafePathError("the path names no file");
  if (out.length > maxPath) throw new UnsafePathError(`the path is longer than ${maxPath} characters`);
  const problem = portablePathProblem(out);
  if (problem !== null) throw new UnsafePathError(problem);
  return out;
}

/**
 * The normalised form of an output path that stays inside the output root.
 * @throws UnsafePathError when the path is unsafe (see normalizePath).
 */
export const safeOutputPath = (path: string): string => normalizePath(path);
