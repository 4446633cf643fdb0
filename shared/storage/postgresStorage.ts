/**
 * The PostgreSQL storage driver: metadata in `stored_files`, content in 1 MiB rows of
 * `stored_file_chunks`. A put writes chunks as they arrive and flips `complete` at the end,
 * in one transaction, so readers never see half a file.
 */
import { Readable } from "node:stream";
import { z } from "zod";
import { ignoredRow, sql, type DatabasePool } from "../db/pool.ts";
import { assertSafeKey, type ByteRange, type DeleteExpiredOptions, type PutOptions, type ReadOptions, type Storage, type StoredFileInfo } from "./storage.ts";

const CHUNK = 1024 * 1024;

const infoRow = z.object({
  id: z.number(),
  key: z.string(),
  size: z.number(),
  content_type: z.string(),
  created_at: z.date(),
  expires_at: z.date().nullable(),
});
const toInfo = (row: z.infer<typeof infoRow>): StoredFileInfo => ({
  key: row.key,
  size: row.size,
  contentType: row.content_type,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  // Row ids are never reused, and a put always makes a new row.
  version: `${row.id.toString(36)}-${row.size.toString(36)}`,
});

/**
 * The content as chunks of CHUNK bytes (the last one shorter). A Buffer is cut into views. A
 * stream's pieces are copied into two buffers taken in turn, so a large upload makes no
 * garbage per chunk: the caller must be done with a chunk (its insert finished) before it
 * asks for the chunk after the next, as `put` is (one insert in flight).
 */
async function* chunked(content: Buffer | Readable | AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  if (Buffer.isBuffer(content)) {
    for (let i = 0; i < content.length; i += CHUNK) yield content.subarray(i, i + CHUNK);
    return;
  }
  const buffers: Buffer[] = [];
  let turn = 0;
  let block: Buffer | null = null;
  let used = 0;
  for await (const piece of content as AsyncIterable<Buffer | string>) {
    const bytes = typeof piece === "string" ? Buffer.from(piece) : piece;
    for (let from = 0; from < bytes.length; ) {
      if (!block) {
        if (buffers.length < 2) buffers.push(Buffer.allocUnsafe(CHUNK));
        block = buffers[turn]!;
        turn ^= 1;
      }
      const n = bytes.copy(block, used, from);
      used += n;
      from += n;
      if (used === CHUNK) {
        yield block;
        block = null;
        used = 0;
      }
    }
  }
  if (block && used > 0) yield block.subarray(0, used);
}

export class PostgresStorage implements Storage {
  readonly #pool: DatabasePool;

  constructor(pool: DatabasePool) {
    this.#pool = pool;
  }

  async put(key: string, content: Buffer | Readable | AsyncIterable<Buffer>, options: PutOptions = {}): Promise<StoredFileInfo> {
    assertSafeKey(key);
    return this.#pool.transaction(async (tx) => {
      await tx.query(sql.type(ignoredRow)`delete from stored_files where key = ${key}`);
      const id = await tx.oneFirst(sql.type(z.object({ id: z.number() }))`
        insert into stored_files (key, content_type, expires_at)
        values (${key}, ${options.contentType ?? "application/octet-stream"}, ${options.expiresAt ? options.expiresAt.toISOString() : null})
        returning id`);
      let seq = 0;
      let size = 0;
      // One chunk's insert stays in flight while the next chunk is produced (a zip being
      // built, a download), so producing and storing overlap; at most two chunks are held,
      // and the chunk being filled is never the one in flight (chunked()'s two buffers).
      let inFlight: Promise<unknown> | null = null;
      try {
        for await (const chunk of chunked(content)) {
          if (inFlight) await inFlight;
          inFlight = tx.query(sql.type(ignoredRow)`insert into stored_file_chunks (file_id, seq, data) values (${id}, ${seq}, ${sql.binary(chunk)})`);
          inFlight.catch(() => {}); // awaited on the next chunk or below
          seq += 1;
          size += chunk.length;
        }
      } finally {
        // Never leave the transaction with a statement of ours still running on it.
        await inFlight?.catch(() => {});
      }
      await inFlight;
      const row = await tx.one(sql.type(infoRow)`
        update stored_files set size = ${size}, complete = true where id = ${id}
        returning id, key, size, content_type, created_at, expires_at`);
      return toInfo(row);
    });
  }

  async #find(key: string) {
    return this.#pool.maybeOne(sql.type(infoRow)`
      select id, key, size, content_type, created_at, expires_at from stored_files where key = ${key} and complete`);
  }

  async stat(key: string): Promise<StoredFileInfo | null> {
    const row = await this.#find(key);
    return row ? toInfo(row) : null;
  }

  async read(key: string, options: ReadOptions = {}): Promise<{ info: StoredFileInfo; stream: Readable; range: ByteRange | null } | null> {
    const row = await this.#find(key);
    if (!row) return null;
    const info = toInfo(row);
    const range = options.range?.(info) ?? null;
    if (range && !(Number.isSafeInteger(range.start) && Number.isSafeInteger(range.end) && range.start >= 0 && range.start <= range.end && range.end < row.size)) {
      throw new RangeError(`Byte range ${range.start}-${range.end} is not within stored file ${row.key} (${row.size} bytes).`);
    }
    const pool = this.#pool;
    const id = row.id;
    const start = range ? range.start : 0;
    const end = range ? range.end : row.size - 1;
    // Chunks are read one at a time, so the file may be removed or replaced (a new id) while a
    // slow reader is half-way: then its stream fails instead of ending early, so a download
    // is cut off (the client sees an error) rather than answered short of its Content-Length.
    // Every chunk but the last holds CHUNK bytes (put cuts them so), which places a range's
    // first byte; PostgreSQL reads only the slice asked for (chunks are stored uncompressed).
    async function* chunks() {
      let read = 0;
      const wanted = end - start + 1;
      for (let seq = Math.floor(start / CHUNK); read < wanted; seq += 1) {
        const from = seq === Math.floor(start / CHUNK) ? start % CHUNK : 0;
        const length = Math.min(CHUNK - from, wanted - read);
        const data = await pool.maybeOneFirst(sql.type(z.object({ data: z.instanceof(Buffer) }))`
          select substring(data from ${from + 1} for ${length}) as data from stored_file_chunks where file_id = ${id} and seq = ${seq}`);
        if (!data || data.length === 0) break;
        read += data.length;
        yield data;
        if (data.length < length) break;
      }
      if (read !== wanted) throw new Error(`Stored file ${row!.key} was removed or replaced while it was read (${read} of ${wanted} bytes).`);
    }
    // An empty file has no chunks to read.
    return { info, range, stream: Readable.from(row.size === 0 ? [] : chunks()) };
  }

  async readBuffer(key: string): Promise<Buffer | null> {
    const found = await this.read(key);
    if (!found) return null;
    const parts: Buffer[] = [];
    for await (const part of found.stream) parts.push(part as Buffer);
    return Buffer.concat(parts);
  }

  async delete(key: string): Promise<boolean> {
    const gone = await this.#pool.maybeOne(sql.type(z.object({ id: z.number() }))`delete from stored_files where key = ${key} returning id`);
    return gone !== null;
  }

  async list(prefix: string, limit = 100): Promise<StoredFileInfo[]> {
    const rows = await this.#pool.any(sql.type(infoRow)`
      select id, key, size, content_type, created_at, expires_at from stored_files
      where starts_with(key, ${prefix}) and complete order by created_at desc, id desc limit ${limit}`);
    return rows.map(toInfo);
  }

  async deleteExpired(options: DeleteExpiredOptions = {}): Promise<number> {
    const before = (options.expiredBefore ?? new Date()).toISOString();
    const limit = Math.min(Math.max(Math.trunc(options.limit ?? 100), 1), 1000);
    // Chunks go with their file (on delete cascade).
    return this.#pool.oneFirst(sql.type(z.object({ count: z.number() }))`
      with expired as (
        select id from stored_files where expires_at < ${before}::timestamptz
        order by expires_at limit ${limit} for update skip locked
      ), gone as (delete from stored_files f using expired where f.id = expired.id returning 1)
      select count(*)::int as count from gone`);
  }
}
