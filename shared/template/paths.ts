/**
 * Output paths: every generated file lands inside the output root, whatever its file name
 * template renders to. Paths are `/`-separated and relative; `.` segments are dropped; anything
 * that could leave the root or confuse an archive or a file system is refused rather than
 * repaired, so a template author sees the problem.
 */

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
 * short enough. Most paths are like that, and a character loop is cheaper than the checks below.
 */
function isPlain(path: string): boolean {
  const n = path.length;
  if (n === 0 || n > maxSegment) return false;
  let start = 0;
  for (let i = 0; i <= n; i++) {
    const c = i < n ? path.charCodeAt(i) : 47;
    if (c === 47 /* / */) {
      const len = i - start;
      if (len === 0) return false;
      if (path.charCodeAt(start) === 46 /* . */ && (len === 1 || (len === 2 && path.charCodeAt(start + 1) === 46))) return false;
      start = i + 1;
    } else if (c < 32 || c >= 127 || c === 92 /* \ */ || (c === 58 /* : */ && i === 1)) return false;
  }
  return true;
}

/**
 * Normalises a relative path (`./a/./b.ts` → `a/b.ts`, Unicode NFC, so that the two spellings
 * of `é` are one path). The rules match the archive writer's (shared/archive/entryPath.ts) or
 * are stricter, so every path a template produces can be archived.
 * @throws UnsafePathError on absolute paths, `..`, backslashes, NUL and other control
 * characters (C0, DEL, C1), U+FFFD, empty segments, or an over-long path.
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
  return out;
}

/**
 * The normalised form of an output path that stays inside the output root.
 * @throws UnsafePathError when the path is unsafe (see normalizePath).
 */
export const safeOutputPath = (path: string): string => normalizePath(path);
