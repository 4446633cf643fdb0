/**
 * File storage behind one interface (DESIGN §8): outbox e-mails, attachments, media and
 * generated archives. The default driver keeps files in PostgreSQL so that every web and
 * worker process reads what any other wrote; files are streamed in and out in chunks, so
 * a large archive never sits whole in memory.
 */
import type { Readable } from "node:stream";

export interface StoredFileInfo {
  key: string;
  size: number;
  contentType: string;
  createdAt: Date;
  expiresAt: Date | null;
  /** Opaque, and different for every file ever stored under a key (a replaced file gets a new one): a strong validator. */
  version: string;
}

/** Bytes `start` to `end` of a file, both included (HTTP's byte-range form). */
export interface ByteRange {
  start: number;
  end: number;
}

export interface ReadOptions {
  /**
   * Decides, once the file is found, which bytes to stream: a range within its size, or null
   * for all of them. Deciding from the file read (not from an earlier `stat`) keeps the
   * decision and the bytes about the same file when it is replaced meanwhile. May throw to
   * refuse the read.
   */
  range?: (info: StoredFileInfo) => ByteRange | null;
}

export interface PutOptions {
  contentType?: string;
  /** The file may be removed by the cleanup job after this instant. */
  expiresAt?: Date | null;
}

export interface DeleteExpiredOptions {
  /** Only files that expired before this instant (a sweep passes now minus its grace period). */
  expiredBefore?: Date;
  /** At most this many files in one call (1–1000), so one call stays a short statement. */
  limit?: number;
}

export interface Storage {
  /** Stores `content` under `key`, replacing any file there. Resolves once it is readable. */
  put(key: string, content: Buffer | Readable | AsyncIterable<Buffer>, options?: PutOptions): Promise<StoredFileInfo>;
  /** Metadata of a complete file, or null. */
  stat(key: string): Promise<StoredFileInfo | null>;
  /** Streams a complete file, or the range `options.range` picks; null when there is none. */
  read(key: string, options?: ReadOptions): Promise<{ info: StoredFileInfo; stream: Readable; range: ByteRange | null } | null>;
  /** The whole content (small files only). */
  readBuffer(key: string): Promise<Buffer | null>;
  /** Removes a file; resolves to whether it existed. */
  delete(key: string): Promise<boolean>;
  /** Keys under a prefix, newest first. */
  list(prefix: string, limit?: number): Promise<StoredFileInfo[]>;
  /**
   * Removes up to `limit` (default 100) files whose expiry is before `expiredBefore`
   * (default now), oldest expiry first; returns how many. Files another caller holds (being
   * replaced or removed right now) are skipped, so concurrent sweeps never wait on each other.
   */
  deleteExpired(options?: DeleteExpiredOptions): Promise<number>;
}

/** Refuses keys that could be confused with paths outside their area. */
export function assertSafeKey(key: string): void {
  if (!/^[A-Za-z0-9][A-Za-z0-9._\-/]{0,1023}$/.test(key) || key.includes("..") || key.includes("//") || key.endsWith("/")) {
    throw new Error(`Unsafe storage key: ${JSON.stringify(key)}`);
  }
}
