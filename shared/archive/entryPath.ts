/**
 * Entry path safety, shared by the writer (what we put in an archive) and the reader (what an
 * upload may contain). A safe path is relative, uses `/` only, has no `.`/`..`/empty segments
 * after normalisation, no control characters and no drive letter, and is NFC so that two
 * spellings of one name (macOS writes NFD) are one path. Anything else is refused rather than
 * "fixed": a path that needed fixing is a bug or an attack, never intended output.
 */
import { CaseFolds, caseClash, portablePathProblem } from "../portablePaths.ts";
import { ArchiveError, quote } from "./errors.ts";

/** Longest accepted path in UTF-8 bytes (PATH_MAX on Linux; the format itself allows 65,535). */
export const maxEntryPathBytes = 4096;

// C0 controls, DEL and C1 controls: invisible in listings, and NUL truncates names in C tools.
// eslint-disable-next-line no-control-regex
const controlCharacters = /[\u0000-\u001f\u007f-\u009f]/;
const driveLetter = /^[A-Za-z]:/;

/**
 * Returns the normalised form of an entry path: NFC, `./` prefixes, `.` segments and repeated
 * slashes removed. Refuses what could escape the extraction folder or misbehave on some system.
 * @throws ArchiveError `archive_unsafe_path`
 */
export function normaliseEntryPath(path: string): string {
  const refuse = (why: string) => new ArchiveError("archive_unsafe_path", `Unsafe archive path ${quote(String(path))}: ${why}.`, String(path));
  if (typeof path !== "string" || path.length === 0) throw refuse("it is empty");
  if (controlCharacters.test(path)) throw refuse("it contains a control character");
  if (path.includes("\\")) throw refuse("it contains a backslash");
  if (path.includes("\ufffd")) throw refuse("it is not valid UTF-8");
  if (path.startsWith("/")) throw refuse("it is absolute");
  if (driveLetter.test(path)) throw refuse("it starts with a drive letter");
  if (path.endsWith("/")) throw refuse("it names a directory, not a file");
  const segments: string[] = [];
  for (const segment of path.normalize("NFC").split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") throw refuse("it contains a '..' segment");
    segments.push(segment);
  }
  if (segments.length === 0) throw refuse("it has no file name");
  const joined = segments.join("/");
  // A path that was already normal comes back as the caller's own string, not an equal copy:
  // the writer keeps every path for the whole archive, and a copy made here would be one more
  // object per entry for the young generation to move and promote.
  const normalised = joined === path ? path : joined;
  if (Buffer.byteLength(normalised) > maxEntryPathBytes) throw refuse(`it is longer than ${maxEntryPathBytes} bytes`);
  return normalised;
}

/**
 * Remembers the paths of one archive and refuses a second entry with the same normalised path
 * (which would silently overwrite the first on extraction). A `portable` set also refuses
 * what shared/portablePaths.ts refuses, paths that differ only in case included.
 */
export class EntryPathSet {
  private readonly seen = new Set<string>();
  private readonly folds: CaseFolds | null;

  constructor(portable = false) {
    this.folds = portable ? new CaseFolds() : null;
  }

  /**
   * Normalises `path`, records it and returns it.
   * @throws ArchiveError `archive_unsafe_path` or `archive_duplicate_path`
   */
  add(path: string): string {
    const normalised = normaliseEntryPath(path);
    if (this.seen.has(normalised)) throw new ArchiveError("archive_duplicate_path", `Duplicate archive path ${quote(normalised)}.`, path);
    if (this.folds) {
      const problem = portablePathProblem(normalised);
      if (problem !== null) throw new ArchiveError("archive_unsafe_path", `Unsafe archive path ${quote(normalised)}: ${problem}.`, path);
      const clash = this.folds.add(normalised);
      if (clash !== null) throw new ArchiveError("archive_duplicate_path", `Archive paths clash: ${caseClash(normalised, clash)}.`, path);
    }
    this.seen.add(normalised);
    return normalised;
  }

  /** How many paths were recorded. */
  get size(): number {
    return this.seen.size;
  }
}
