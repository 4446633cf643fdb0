/**
 * Stored files as response bodies with byte ranges (RFC 9110 §14), so a large download cut off
 * half-way resumes where it stopped instead of starting again: `Accept-Ranges: bytes`, a strong
 * `ETag` and `Last-Modified` on every answer, one `Range` of `bytes` (`a-b`, `a-`, `-n`) answered
 * 206 with `Content-Range`, and `If-Range` so that a resumed download of a file replaced
 * meanwhile gets the whole new file rather than a splice of two. A range past the end is 416 with
 * a `Content-Range` that gives the file's size; a header that is not one well-formed byte range (several
 * ranges among them) is ignored and the whole file sent, as the RFC allows.
 */
import type { Readable } from "node:stream";
import { AppError } from "../shared/errors.ts";
import type { ByteRange, Storage, StoredFileInfo } from "../shared/storage/storage.ts";
import type { AppContext } from "./context.ts";

/** What a Range header asks of a file of `size` bytes. */
export type RangeRequest = { kind: "whole" } | { kind: "range"; range: ByteRange } | { kind: "unsatisfiable" };

const whole: RangeRequest = { kind: "whole" };

/** Longest Range header looked at: a well-formed single range of two 16-digit numbers is far shorter. */
const MAX_RANGE_HEADER = 100;

/**
 * Reads a `Range` header for a file of `size` bytes. Only a single `bytes` range is served;
 * anything else (another unit, several ranges, a malformed or reversed range) asks for the whole
 * file, which RFC 9110 §14.2 lets a server send instead.
 */
export function parseRange(header: string | undefined, size: number): RangeRequest {
  if (!header || header.length > MAX_RANGE_HEADER) return whole;
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!match) return whole;
  const [, first, last] = match as unknown as [string, string, string];
  if (first === "" && last === "") return whole;
  if (first === "") {
    // A suffix: the last n bytes (all of them when n is more than the file holds).
    const n = Number(last);
    if (!Number.isSafeInteger(n)) return whole;
    if (n === 0 || size === 0) return { kind: "unsatisfiable" };
    return { kind: "range", range: { start: Math.max(0, size - n), end: size - 1 } };
  }
  const start = Number(first);
  const end = last === "" ? Number.MAX_SAFE_INTEGER : Number(last);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end < start) return whole;
  if (start >= size) return { kind: "unsatisfiable" };
  return { kind: "range", range: { start, end: Math.min(end, size - 1) } };
}

/** The strong entity tag of a stored file. */
export const entityTag = (info: StoredFileInfo) => `"${info.version}"`;

/**
 * Whether an `If-Range` validator still names the file: its strong entity tag, or its
 * `Last-Modified` date exactly (RFC 9110 §13.1.5; weak tags never match).
 */
export function ifRangeHolds(header: string | undefined, info: StoredFileInfo): boolean {
  if (!header) return true;
  const value = header.trim();
  if (value.startsWith('"')) return value === entityTag(info);
  if (value.startsWith("W/")) return false;
  const date = Date.parse(value);
  return !Number.isNaN(date) && date === Math.floor(info.createdAt.getTime() / 1000) * 1000;
}

/** Chooses the bytes to send of `info` for this request, or throws the 416. */
function rangeFor(ctx: AppContext, info: StoredFileInfo): ByteRange | null {
  const header = ctx.get("range");
  if (!header || ctx.method !== "GET" || !ifRangeHolds(ctx.get("if-range") || undefined, info)) return null;
  const request = parseRange(header, info.size);
  if (request.kind === "unsatisfiable") {
    throw new AppError(416, "range_not_satisfiable", `The requested range is not within the file's ${info.size} bytes.`, undefined, { "Content-Range": `bytes */${info.size}` });
  }
  return request.kind === "range" ? request.range : null;
}

/**
 * Reads stored file `key` for this request: the whole file, or the range the request asks for
 * (an unsatisfiable one throws the 416). Null when the file is gone. Sets the validators and
 * `Accept-Ranges`; `sendStoredFile` then sends it.
 */
export async function readForRequest(ctx: AppContext, storage: Storage, key: string): Promise<{ info: StoredFileInfo; stream: Readable; range: ByteRange | null } | null> {
  const file = await storage.read(key, { range: (info) => rangeFor(ctx, info) });
  if (!file) return null;
  ctx.set("Accept-Ranges", "bytes");
  ctx.set("ETag", entityTag(file.info));
  ctx.set("Last-Modified", file.info.createdAt.toUTCString());
  return file;
}

/** Sends a file `readForRequest` read: 200 with its length, or 206 with the range's. */
export function sendStoredFile(ctx: AppContext, file: { info: StoredFileInfo; stream: Readable; range: ByteRange | null }): void {
  const { info, range } = file;
  if (range) {
    ctx.status = 206;
    ctx.set("Content-Range", `bytes ${range.start}-${range.end}/${info.size}`);
  }
  ctx.set("Content-Length", String(range ? range.end - range.start + 1 : info.size));
  ctx.body = file.stream;
}
