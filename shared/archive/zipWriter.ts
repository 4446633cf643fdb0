/**
 * Streaming ZIP writer. Entries are pulled from an (async) iterable and bytes leave as soon as
 * they are made, so memory holds a bounded window of entries (at most 256 entries / 256 KiB
 * waiting for deflate, `readAhead` loading), a 64 KiB block and the central directory (~110
 * bytes an entry), never the archive. The output is a Readable that only pulls the next entry
 * when its consumer reads: a slow consumer stops the writer.
 *
 * In-memory entries up to 256 KiB (the bulk of generated code) are copied into batches whose
 * CRCs and deflate streams the process's deflate threads compute (deflateThreads.ts) while the
 * entries before them are written; their CRC and sizes go in the local header, and they are
 * stored instead when deflate does not shrink them. Larger or streamed entries go through
 * their own streaming deflate and a data descriptor. Measured figures and the reasons for each
 * choice are in docs/notes/archive.md.
 */
import { Readable } from "node:stream";
import { pipeline } from "node:stream";
import zlib from "node:zlib";
import { ChunkBatcher } from "./chunkBatcher.ts";
import { readAhead, release } from "./readAhead.ts";
import { DeflateBatcher, type DeflateTicket } from "./deflateThreads.ts";
import { toDosDateTime, toUnixSeconds, type DosDateTime } from "./dosTime.ts";
import { EntryPathSet } from "./entryPath.ts";
import { ArchiveError, quote } from "./errors.ts";
import {
  centralHeader,
  dataDescriptor,
  endRecords,
  flagDataDescriptor,
  flagUtf8,
  localHeader,
  methodDeflate,
  methodStore,
  type EntryRecord,
} from "./zipFormat.ts";

/** What an entry's bytes may be: in memory, or a stream of chunks. */
export type ZipContent = Buffer | Uint8Array | string | Readable | AsyncIterable<Buffer | Uint8Array | string>;

/** One file to put in the archive. */
export interface ZipEntryInput {
  /** Relative path inside the archive; normalised and checked (see entryPath.ts). */
  path: string;
  /**
   * The bytes (strings are UTF-8), or a function producing them shortly before the entry is
   * written (see `readAhead`). A Buffer must not change until the archive stream has ended.
   */
  content: ZipContent | (() => ZipContent | Promise<ZipContent>);
  /** Modification time; defaults to the archive's `mtime`. */
  mtime?: Date;
  /** Unix permission bits (e.g. 0o755); defaults to 0o644. File type bits are ignored. */
  mode?: number;
}

/** Options of {@link createZipStream}. */
export interface ZipStreamOptions {
  /** Deflate level 0–9 (default 6; 0 stores). */
  level?: number;
  /** Write ZIP64 records for every entry and the end of the archive even when nothing overflows. */
  zip64?: boolean;
  /** Default modification time of entries (default: when the stream was created). */
  mtime?: Date;
  /**
   * How many entries ahead lazy `content` functions are started (default 8), so that slow
   * sources (files, storage) are read concurrently while earlier entries are written.
   */
  readAhead?: number;
  /**
   * Refuse entry paths that are not portable (shared/portablePaths.ts: `.git`, Windows device
   * names and characters, trailing dots and spaces, paths that differ only in case): for
   * archives of generated code, which is unpacked on any system and into working copies.
   */
  portable?: boolean;
}

/** Entries at most this long go to the deflate threads whole; longer ones are streamed. */
const wholeLimit = 256 * 1024;
/** Below this, deflate cannot win enough to pay for its call: stored as is. */
const storeBelow = 64;
/**
 * Entries (and their bytes) deflating ahead of the one being written: bounds memory (each byte
 * is held twice, in a batch's input and output) and keeps the threads busy.
 */
const aheadEntries = 256;
const aheadBytes = 256 * 1024;
const max32 = 0xffffffff;

/**
 * Returns a Readable of the ZIP archive of `entries`, produced lazily as it is read.
 * The stream errors with an {@link ArchiveError} (unsafe or duplicate path, oversize stream
 * without ZIP64) or with the error of an entry's content stream.
 */
export function createZipStream(entries: Iterable<ZipEntryInput> | AsyncIterable<ZipEntryInput>, options: ZipStreamOptions = {}): Readable {
  checkLevel(options.level);
  checkReadAhead(options.readAhead);
  return Readable.from(zipChunks(entries, options), { objectMode: false, highWaterMark: 64 * 1024 });
}

/** @throws RangeError unless the level is an integer 0–9 */
function checkLevel(level = 6): number {
  if (!Number.isInteger(level) || level < 0 || level > 9) throw new RangeError(`Deflate level must be 0–9, got ${level}.`);
  return level;
}

/** @throws RangeError unless readAhead is a non-negative integer */
function checkReadAhead(depth = 8): number {
  if (!Number.isInteger(depth) || depth < 0) throw new RangeError(`readAhead must be a non-negative integer, got ${depth}.`);
  return depth;
}

/** An in-memory entry: stored as is (`data`), or in a deflate batch whose answer may still be on its way. */
type Queued = { record: EntryRecord; data: Buffer; ticket: null } | { record: EntryRecord; data: null; ticket: DeflateTicket };

/** The archive as an async sequence of chunks (what {@link createZipStream} wraps). */
export async function* zipChunks(
  entries: Iterable<ZipEntryInput> | AsyncIterable<ZipEntryInput>,
  options: ZipStreamOptions = {},
): AsyncGenerator<Buffer, void, undefined> {
  const level = checkLevel(options.level);
  const forceZip64 = options.zip64 === true;
  const defaultTime = stamp(options.mtime ?? new Date());
  const out = new ChunkBatcher();
  const central = new ChunkBatcher();
  const paths = new EntryPathSet(options.portable === true);
  const batcher = level > 0 ? new DeflateBatcher(level) : null;
  const queue: Queued[] = [];
  let queuedBytes = 0;

  /** Writes the oldest queued entry: header and body, stored when deflate did not shrink it. */
  const writeFirst = async () => {
    const entry = queue.shift()!;
    const record = entry.record;
    queuedBytes -= record.size;
    let body: Buffer;
    if (entry.ticket) {
      const result = await batcher!.result(entry.ticket);
      record.crc = result.crc;
      record.method = result.deflated ? methodDeflate : methodStore;
      body = result.body;
    } else {
      body = entry.data;
    }
    record.compressedSize = body.length;
    record.offset = out.written;
    out.write(localHeader(record));
    out.write(body); // copied: a batch's buffers are reused
    if (entry.ticket) batcher!.done(entry.ticket);
    central.write(centralHeader(record, forceZip64));
  };

  for await (const { input, content: pending } of readAhead(entries, checkReadAhead(options.readAhead))) {
    let record: EntryRecord;
    try {
      record = newRecord(paths, input, input.mtime ? stamp(input.mtime) : defaultTime, forceZip64);
    } catch (error) {
      release(pending);
      throw error;
    }
    const content = await resolve(pending);
    if (content.length !== undefined && content.length <= wholeLimit) {
      const data = content.data;
      record.size = data.length;
      if (batcher && data.length >= storeBelow) {
        queue.push({ record, data: null, ticket: batcher.add(data) });
      } else {
        record.crc = zlib.crc32(data);
        record.method = methodStore;
        queue.push({ record, data, ticket: null });
      }
      queuedBytes += data.length;
      while (queue.length > aheadEntries || queuedBytes > aheadBytes) await writeFirst();
    } else {
      while (queue.length) await writeFirst();
      record.flags |= flagDataDescriptor;
      record.offset = out.written;
      if (content.length !== undefined && content.length >= max32) record.zip64Local = true;
      out.write(localHeader(record));
      const source = content.length === undefined ? content.data : [content.data];
      for await (const chunk of deflateStream(source, record, level)) {
        out.write(chunk, true);
        if (out.ready) yield* out.take();
      }
      out.write(dataDescriptor(record));
      central.write(centralHeader(record, forceZip64));
    }
    if (out.ready) yield* out.take();
  }
  while (queue.length) await writeFirst();
  const directoryOffset = out.written;
  yield* out.take(true);
  yield* central.take(true);
  yield endRecords(paths.size, directoryOffset, central.written, forceZip64);
}

/**
 * Checks and records the entry's path and starts its record.
 * @throws ArchiveError `archive_unsafe_path` or `archive_duplicate_path`
 */
function newRecord(paths: EntryPathSet, input: ZipEntryInput, time: Stamp, forceZip64: boolean): EntryRecord {
  // The path set's own string: no Buffer per entry (a small Buffer is a view of an 8 KiB
  // pool slab, which it would keep alive while the entry waits for deflate).
  const name = paths.add(input.path);
  return {
    name,
    nameLength: Buffer.byteLength(name),
    method: methodDeflate,
    flags: flagUtf8,
    dos: time.dos,
    unixSeconds: time.unixSeconds,
    crc: 0,
    compressedSize: 0,
    size: 0,
    offset: 0,
    mode: (input.mode ?? 0o644) & 0o777,
    zip64Local: forceZip64,
  };
}

interface Stamp {
  dos: DosDateTime;
  unixSeconds: number | null;
}

const stamp = (when: Date): Stamp => ({ dos: toDosDateTime(when), unixSeconds: toUnixSeconds(when) });

/** Content with its length when it is in memory (`length` undefined for streams). */
type Resolved = { data: Buffer; length: number } | { data: AsyncIterable<Buffer | Uint8Array | string>; length: undefined };

async function resolve(content: ZipContent | Promise<ZipContent>): Promise<Resolved> {
  const value = await content;
  if (typeof value === "string") {
    const data = Buffer.from(value);
    return { data, length: data.length };
  }
  if (value instanceof Uint8Array) {
    const data = Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    return { data, length: data.length };
  }
  if (value && typeof (value as AsyncIterable<unknown>)[Symbol.asyncIterator] === "function") return { data: value, length: undefined };
  throw new TypeError("Zip entry content must be a Buffer, a string, a Readable or an async iterable of chunks.");
}

/**
 * Deflates a stream of chunks, updating the record's CRC and sizes as bytes pass. Backpressure
 * holds: the source is read only as fast as the deflated output is consumed.
 */
async function* deflateStream(source: Iterable<Buffer> | AsyncIterable<Buffer | Uint8Array | string>, record: EntryRecord, level: number): AsyncGenerator<Buffer> {
  const deflate = zlib.createDeflateRaw({ level, chunkSize: 64 * 1024 });
  const count = async function* (chunks: AsyncIterable<Buffer | Uint8Array | string> | Iterable<Buffer>) {
    for await (const chunk of chunks) {
      const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
      record.crc = zlib.crc32(bytes, record.crc);
      record.size += bytes.length;
      if (!record.zip64Local && record.size >= max32) {
        throw new ArchiveError(
          "archive_entry_too_large",
          `Archive entry ${quote(String(record.name))} streams 4 GiB or more; create the archive with { zip64: true }.`,
          String(record.name),
        );
      }
      yield bytes;
    }
  };
  const deflated = pipeline(source, count, deflate, () => {
    // Errors surface through the iteration below; this callback only keeps pipeline from throwing.
  });
  for await (const chunk of deflated as AsyncIterable<Buffer>) {
    record.compressedSize += chunk.length;
    yield chunk;
  }
  if (!record.zip64Local && record.compressedSize >= max32) {
    throw new ArchiveError("archive_entry_too_large", `Archive entry ${quote(String(record.name))} deflates to 4 GiB or more; create the archive with { zip64: true }.`, String(record.name));
  }
}
