/**
 * Safe reading of ZIP archives that come from users (uploads, template imports), on top of
 * yauzl. The whole central directory is checked before a byte is inflated: entry count, every
 * path (zip-slip), symlinks and special files, encryption, declared sizes and ratios, and
 * overlapping entries (the "better zip bomb"). Then each entry is inflated with its actual
 * output counted against the same limits, its declared size and its CRC, so a header that lies
 * stops the read within one 16 KiB chunk.
 *
 * Every refusal is an ArchiveError with a stable code (errors.ts).
 */
import yauzl, { type Entry, type ZipFile } from "yauzl";
import { isUtf8 } from "node:buffer";
import { readFile, stat } from "node:fs/promises";
import zlib from "node:zlib";
import { EntryPathSet, normaliseEntryPath } from "./entryPath.ts";
import { ArchiveError, quote } from "./errors.ts";

/** Limits on what an archive may contain; see {@link defaultZipLimits}. */
export interface ZipReadLimits {
  /** Most entries (files and folders) the central directory may list. */
  maxEntries: number;
  /** Most bytes one entry may inflate to. */
  maxEntrySize: number;
  /** Most bytes all entries together may inflate to. */
  maxTotalSize: number;
  /** Highest inflated/compressed ratio of an entry once it is past `ratioFloor` bytes. */
  maxRatio: number;
  /** Entries smaller than this are exempt from `maxRatio` (small files of blanks compress well). */
  ratioFloor: number;
  /**
   * Also refuse file paths that are not portable (shared/portablePaths.ts): for archives whose
   * files are deployed as they are (the upload form's SSH zip).
   */
  portable?: boolean;
}

/** Defaults sized for template imports: an upload is at most 20 MB (DESIGN §7). */
export const defaultZipLimits: ZipReadLimits = {
  maxEntries: 10_000,
  maxEntrySize: 32 * 1024 * 1024,
  maxTotalSize: 256 * 1024 * 1024,
  maxRatio: 200,
  ratioFloor: 1024 * 1024,
};

/** One file of an archive, inflated and checked. */
export interface ZipFileEntry {
  /** Normalised relative path (safe to join under an extraction folder). */
  path: string;
  content: Buffer;
  /** Modification time (exact when the archive has a "UT" field, else DOS local time). */
  mtime: Date;
  /** Unix permission bits (0o644 when the archive does not record them). */
  mode: number;
}

const typeMask = 0o170000;
const typeFile = 0o100000;
const typeDirectory = 0o040000;
const typeSymlink = 0o120000;

/** A central directory entry that passed the checks, with what the reader needs of it. */
interface Checked {
  entry: Entry;
  path: string;
  mode: number;
}

/**
 * Yields the files of a ZIP archive (a Buffer, or the path of a file), in archive order.
 * Folder entries are checked but not yielded. The archive is refused as a whole before the
 * first file when its directory breaks a limit; a limit broken while inflating throws at that
 * entry, so callers must treat the import as failed, never keep what came before.
 * @throws ArchiveError for every refusal; errors opening a file path are passed through.
 */
export async function* readZip(source: Buffer | string, limits: Partial<ZipReadLimits> = {}, options: ZipReadOptions = {}): AsyncGenerator<ZipFileEntry> {
  const limit = { ...defaultZipLimits, ...limits };
  const zip = await open(source, options);
  try {
    if (zip.entryCount > limit.maxEntries) {
      throw new ArchiveError("archive_too_many_entries", `The archive has ${zip.entryCount} entries; at most ${limit.maxEntries} are allowed.`);
    }
    const files = await checkDirectory(zip, limit);
    let total = 0;
    for (const file of files) {
      const content = await inflate(zip, file, limit, total, true);
      total += content.length;
      yield { path: file.path, content, mtime: file.entry.getLastModDate(), mode: file.mode };
    }
  } finally {
    zip.close();
  }
}

/** How an archive file is read. */
export interface ZipReadOptions {
  /**
   * Read the archive file in place instead of loading one under 64 MiB into memory first:
   * slower on many small entries, but concurrent readers (uploads) keep only their current
   * entry in memory.
   */
  inPlace?: boolean;
}

/**
 * Checks a whole archive file with {@link readZip}'s checks, inflating every entry but
 * keeping none: at most one entry's chunks are in memory. Returns how many files it holds and
 * how many bytes they inflate to.
 * @throws ArchiveError for every refusal.
 */
export async function scanZip(path: string, limits: Partial<ZipReadLimits> = {}): Promise<{ files: number; bytes: number }> {
  const limit = { ...defaultZipLimits, ...limits };
  const zip = await open(path, { inPlace: true });
  try {
    if (zip.entryCount > limit.maxEntries) {
      throw new ArchiveError("archive_too_many_entries", `The archive has ${zip.entryCount} entries; at most ${limit.maxEntries} are allowed.`);
    }
    let bytes = 0;
    const files = await checkDirectory(zip, limit);
    for (const file of files) bytes += await inflate(zip, file, limit, bytes, false);
    return { files: files.length, bytes };
  } finally {
    zip.close();
  }
}

/** Reads a whole archive into memory (at most `maxTotalSize` bytes) with {@link readZip}'s checks. */
export async function extractToMemory(source: Buffer | string, limits: Partial<ZipReadLimits> = {}): Promise<ZipFileEntry[]> {
  const files: ZipFileEntry[] = [];
  for await (const file of readZip(source, limits)) files.push(file);
  return files;
}

const corrupt = (message: string, entry?: string) => new ArchiveError("archive_corrupt", message, entry);

/**
 * yauzl reports format problems as plain Errors and zlib broken deflate data with a `Z_…`
 * code (a truncated stream: Z_BUF_ERROR); file-system errors keep their `code`.
 */
function translate(error: unknown, entry?: string): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (error instanceof ArchiveError || (code && !code.startsWith("Z_"))) return error;
  const message = (error instanceof Error ? error.message : String(error)).replace(/\.+$/, "");
  if (/encrypt/i.test(message)) return new ArchiveError("archive_unsupported", `Encrypted archives are not supported (${message}).`, entry);
  return corrupt(`The archive is not a valid zip file: ${message}.`, entry);
}

/**
 * Archive files up to this size are read into memory first: yauzl reading a file issues a few
 * reads per entry, five times slower than from a Buffer on archives of many small files.
 */
const readWholeBelow = 64 * 1024 * 1024;

async function open(source: Buffer | string, how: ZipReadOptions = {}): Promise<ZipFile> {
  // decodeStrings off: names are decoded and judged here, so that every refusal has our code.
  const options = { lazyEntries: true, autoClose: false, decodeStrings: false, validateEntrySizes: false, strictFileNames: true };
  if (typeof source === "string" && !how.inPlace && (await stat(source)).size <= readWholeBelow) source = await readFile(source);
  try {
    return typeof source === "string" ? await yauzl.openPromise(source, options) : await yauzl.fromBufferPromise(source, options);
  } catch (error) {
    throw translate(error);
  }
}

/**
 * The entry's name. The format says an unflagged name is CP437, but Info-ZIP zip on Linux and
 * others write UTF-8 without the flag; a non-ASCII name that is valid UTF-8 is taken as UTF-8
 * (CP437 text practically never is), anything else goes through yauzl's flag and 0x7075 rules.
 */
function decodeName(entry: Entry): string {
  const raw = entry.fileNameRaw;
  const flagged = (entry.generalPurposeBitFlag & 0x0800) !== 0 || entry.extraFields.some((field) => field.id === 0x7075);
  if (!flagged && isUtf8(raw) && raw.some((byte) => byte >= 0x80)) return raw.toString("utf8");
  return yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, raw, entry.extraFields, true);
}

/** Reads and judges every central directory entry; returns the files to inflate, in order. */
async function checkDirectory(zip: ZipFile, limit: ZipReadLimits): Promise<Checked[]> {
  const paths = new EntryPathSet(limit.portable === true);
  const files: Checked[] = [];
  const spans: [start: number, end: number, path: string][] = [];
  let declaredTotal = 0;
  try {
    for await (const entry of zip.eachEntry()) {
      const name = decodeName(entry);
      const unixMode = entry.externalFileAttributes >>> 16;
      const type = unixMode & typeMask;
      if (type === typeSymlink) throw new ArchiveError("archive_symlink", `The archive entry ${quote(name)} is a symbolic link.`, name);
      const isDirectory = name.endsWith("/") || type === typeDirectory;
      if (isDirectory) {
        normaliseEntryPath(name.replace(/\/+$/, ""));
        continue;
      }
      if (type !== 0 && type !== typeFile) throw new ArchiveError("archive_unsupported", `The archive entry ${quote(name)} is a device, FIFO or socket.`, name);
      const path = paths.add(name);
      if (entry.isEncrypted()) throw new ArchiveError("archive_unsupported", `The archive entry ${quote(name)} is encrypted.`, name);
      if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
        throw new ArchiveError("archive_unsupported", `The archive entry ${quote(name)} uses compression method ${entry.compressionMethod}; only store and deflate are supported.`, name);
      }
      if (entry.compressionMethod === 0 && entry.compressedSize !== entry.uncompressedSize) throw corrupt(`The stored entry ${quote(name)} has mismatched sizes.`, name);
      checkSize(name, entry.uncompressedSize, entry.compressedSize, limit);
      declaredTotal += entry.uncompressedSize;
      if (declaredTotal > limit.maxTotalSize) throw tooLarge(limit);
      spans.push([entry.relativeOffsetOfLocalHeader, entry.relativeOffsetOfLocalHeader + 30 + entry.compressedSize, name]);
      files.push({ entry, path, mode: type === typeFile ? unixMode & 0o777 : 0o644 });
    }
  } catch (error) {
    throw translate(error);
  }
  // Entries whose data overlap let a few kilobytes stand for gigabytes (Fifield's overlapping
  // zip bomb); a well-formed archive never has them.
  spans.sort((a, b) => a[0] - b[0]);
  for (let i = 1; i < spans.length; i++) {
    if (spans[i]![0] < spans[i - 1]![1]) throw corrupt(`The archive entries ${quote(spans[i - 1]![2])} and ${quote(spans[i]![2])} overlap.`, spans[i]![2]);
  }
  return files;
}

const tooLarge = (limit: ZipReadLimits) => new ArchiveError("archive_too_large", `The archive inflates to more than ${limit.maxTotalSize} bytes.`);

/** Judges a size against the limits, declared (from headers) or actual (while inflating). */
function checkSize(name: string, size: number, compressedSize: number, limit: ZipReadLimits): void {
  if (size > limit.maxEntrySize) {
    throw new ArchiveError("archive_entry_too_large", `The archive entry ${quote(name)} inflates to more than ${limit.maxEntrySize} bytes.`, name);
  }
  if (size > limit.ratioFloor && size / Math.max(compressedSize, 1) > limit.maxRatio) {
    throw new ArchiveError("archive_ratio_exceeded", `The archive entry ${quote(name)} inflates more than ${limit.maxRatio} times its compressed size.`, name);
  }
}

/** Inflates one entry, counting actual bytes against every limit and checking size and CRC; keeps its bytes only when `keep`. */
async function inflate(zip: ZipFile, file: Checked, limit: ZipReadLimits, totalBefore: number, keep: true): Promise<Buffer>;
async function inflate(zip: ZipFile, file: Checked, limit: ZipReadLimits, totalBefore: number, keep: false): Promise<number>;
async function inflate(zip: ZipFile, file: Checked, limit: ZipReadLimits, totalBefore: number, keep: boolean): Promise<Buffer | number> {
  const { entry, path } = file;
  const chunks: Buffer[] = [];
  let size = 0;
  let crc = 0;
  let stream: NodeJS.ReadableStream & { destroy?: () => void };
  try {
    stream = await zip.openReadStreamPromise(entry);
  } catch (error) {
    throw translate(error, path);
  }
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      size += chunk.length;
      checkSize(path, size, entry.compressedSize, limit);
      if (totalBefore + size > limit.maxTotalSize) throw tooLarge(limit);
      if (size > entry.uncompressedSize) throw corrupt(`The archive entry ${quote(path)} inflates to more than its declared ${entry.uncompressedSize} bytes.`, path);
      crc = zlib.crc32(chunk, crc);
      if (keep) chunks.push(chunk);
    }
  } catch (error) {
    stream.destroy?.();
    throw translate(error, path);
  }
  if (size !== entry.uncompressedSize) throw corrupt(`The archive entry ${quote(path)} inflates to ${size} bytes, not its declared ${entry.uncompressedSize}.`, path);
  if (crc !== entry.crc32) throw corrupt(`The archive entry ${quote(path)} fails its CRC check.`, path);
  return keep ? Buffer.concat(chunks, size) : size;
}
