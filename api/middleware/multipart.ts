/**
 * Multipart bodies (uploads), read with formidable. Each request writes its files into a
 * folder of its own under the system temp folder, and the folder is removed when the
 * request ends, whether it succeeded or failed, so no upload outlives its request. The
 * file streams are ours (`fileWriteStreamHandler`), so a failed parse can close every one
 * of them before the folder goes: formidable's own clean-up misses a file opened by the
 * part that broke a limit, and leaves its descriptor open.
 *
 * formidable's errors (and partHeaders.ts's refusal of oversized part headers) become 4xx
 * answers naming the limit that was hit; a failure of our
 * own (the disk is full, the temp folder is not writable) stays a 500.
 */
import { once } from "node:events";
import { createWriteStream, type WriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import formidable, { errors as formidableErrors, type File } from "formidable";
import { AppError } from "../../shared/errors.ts";
import type { AppContext } from "../context.ts";
import { boundedMultipart } from "./partHeaders.ts";

/** Limits of one multipart body. */
export interface MultipartLimits {
  /** Bytes of file data, all files together. */
  fileBytes: number;
  /** Bytes of text fields, all together. */
  fieldBytes: number;
  /** Number of files. */
  files: number;
  /** Number of text fields. */
  fields: number;
}

/** Prefix of the per-request upload folders, so an operator can tell them apart. */
export const UPLOAD_DIR_PREFIX = "schemaforge-upload-";

const malformed = (message: string) => new AppError(400, "malformed_body", message);
const tooLarge = (message: string) => new AppError(413, "payload_too_large", message);

/** The client's view of a formidable error; undefined for failures that are ours (500). */
function mapFormidableError(error: unknown, limits: MultipartLimits): AppError | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  switch (code) {
    case formidableErrors.biggerThanMaxFileSize:
    case formidableErrors.biggerThanTotalMaxFileSize:
      return tooLarge(`The uploaded files are too large: at most ${limits.fileBytes} bytes of files may be sent at once.`);
    case formidableErrors.maxFieldsSizeExceeded:
      return tooLarge(`The form fields are too large: at most ${limits.fieldBytes} bytes of text may be sent at once.`);
    case formidableErrors.maxFilesExceeded:
      return tooLarge(`Too many files: at most ${limits.files} files may be sent at once.`);
    case formidableErrors.maxFieldsExceeded:
      return tooLarge(`Too many form fields: at most ${limits.fields} fields may be sent at once.`);
    case formidableErrors.missingMultipartBoundary:
      return malformed("The multipart body has no boundary in its Content-Type header.");
    case formidableErrors.unknownTransferEncoding:
      // formidable marks it 501, but the body is what is wrong: only binary, 7bit, 8bit and base64 are read.
      return malformed("A part uses a Content-Transfer-Encoding this service does not read; send the bytes as they are (binary).");
    case formidableErrors.aborted:
      return malformed("The upload was interrupted before it was complete.");
    case formidableErrors.malformedMultipart:
    case formidableErrors.missingContentType:
    case formidableErrors.noParser:
    case formidableErrors.filenameNotString:
      return malformed("The request body is not valid multipart form data.");
    default:
      return undefined;
  }
}

/** Own properties only (a field named `__proto__` stays a field); one value unwrapped, several kept as a list. */
function collect<T>(entries: [string, T][]): Record<string, T | T[]> {
  const grouped = new Map<string, T[]>();
  for (const [name, value] of entries) grouped.set(name, [...(grouped.get(name) ?? []), value]);
  return Object.fromEntries([...grouped].map(([name, values]) => [name, values.length === 1 ? values[0]! : values]));
}

/** A browser's "no file chosen": a file part without name or content, which means no file. */
const isNoFile = (file: File) => !file.originalFilename && file.size === 0;

async function closeAll(streams: WriteStream[]): Promise<void> {
  await Promise.all(
    streams.map(async (stream) => {
      if (stream.closed) return;
      const closed = once(stream, "close").catch(() => undefined);
      stream.destroy();
      await closed;
    }),
  );
}

/**
 * Parses the multipart body of `ctx` into `ctx.request.body` (text fields) and
 * `ctx.request.files`, runs `next`, and removes the uploaded files afterwards.
 * @throws AppError 400 for a malformed body, 413 past a limit.
 */
export async function withMultipart(ctx: AppContext, limits: MultipartLimits, next: () => Promise<void>): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), UPLOAD_DIR_PREFIX));
  const streams: WriteStream[] = [];
  let finished = false;
  try {
    const form = formidable({
      uploadDir: dir,
      // Part headers bounded too (partHeaders.ts): formidable itself reads them at any length.
      enabledPlugins: [boundedMultipart(limits.files)],
      maxFileSize: limits.fileBytes,
      maxTotalFileSize: limits.fileBytes,
      maxFieldsSize: limits.fieldBytes,
      maxFiles: limits.files,
      maxFields: limits.fields,
      // Empty files are legitimate content (an empty `__init__.py` to deploy); the routes
      // judge them. The browser's empty "no file chosen" part is dropped below.
      allowEmptyFiles: true,
      minFileSize: 0,
      keepExtensions: false,
      fileWriteStreamHandler: (file) => {
        // A part formidable was still setting up when the request ended: discard its data.
        if (finished || !file) return new Writable({ write: (_chunk, _encoding, done) => done() });
        // The typings omit it, but the file carries the path formidable reports to the route
        // (a random name in `dir`).
        const stream = createWriteStream((file as unknown as File).filepath, { flags: "wx", mode: 0o600 });
        streams.push(stream);
        return stream;
      },
    });
    const fields: [string, string][] = [];
    const files: [string, File][] = [];
    form.on("field", (name, value) => fields.push([name, value]));
    form.on("file", (name, file) => {
      if (!isNoFile(file)) files.push([name, file]);
    });
    try {
      await form.parse(ctx.req);
    } catch (error) {
      throw mapFormidableError(error, limits) ?? error;
    }
    ctx.request.body = collect(fields);
    ctx.request.files = collect(files);
    await next();
  } finally {
    finished = true;
    await closeAll(streams);
    await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  }
}
