/**
 * The files of an upload-form deployment, moved from the request to the worker without ever
 * being whole in memory (security review finding 11): the web process streams them from
 * its temporary upload files into one storage object, encrypted on the way (AES-256-GCM
 * under a fresh key that only the sealed bundle holds); the worker streams that object back
 * into a temporary file, where the tag is checked before a byte is used, and reads one file
 * at a time from it.
 *
 * Glossary: the *payload* is that storage object; its *format* is `zip` (the SSH form's
 * archive as uploaded) or `files` (the FTP form's files one after another, cut by `sizes`).
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdtemp, open, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { z } from "zod";
import { readZip, type ZipReadLimits } from "../archive/zipReader.ts";
import type { DeployFile } from "../deploy/types.ts";
import type { Storage } from "../storage/storage.ts";

/** What the sealed bundle records of its payload. */
export const payloadRef = z.object({
  format: z.enum(["zip", "files"]),
  /** The encryption key, IV and tag, base64. */
  key: z.string(),
  iv: z.string(),
  tag: z.string(),
  /** `files`: each file's path and byte count, in payload order. */
  files: z.array(z.object({ path: z.string(), size: z.number().int().nonnegative() })).optional(),
});
export type PayloadRef = z.infer<typeof payloadRef>;

/** Where a request's uploaded files are: the SSH form's zip, or the FTP form's files on disk. */
export type UploadSource = { format: "zip"; file: string } | { format: "files"; files: { path: string; file: string; size: number }[] };

/** Storage key of the payload of the bundle at `key`. */
export const payloadKey = (key: string) => `${key}.payload`;

/** Streams the source's bytes into storage at `key`, encrypted; returns the reference the bundle keeps. */
export async function storePayload(storage: Storage, key: string, source: UploadSource, expiresAt: Date): Promise<PayloadRef> {
  const dataKey = randomBytes(32);
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", dataKey, iv);
  const files = source.format === "zip" ? [source.file] : source.files.map((f) => f.file);
  async function* encrypted() {
    for (const file of files) for await (const chunk of createReadStream(file)) yield cipher.update(chunk as Buffer);
    yield cipher.final();
  }
  await storage.put(key, Readable.from(encrypted()), { contentType: "application/octet-stream", expiresAt });
  return {
    format: source.format,
    key: dataKey.toString("base64"),
    iv: iv.toString("base64"),
    tag: cipher.getAuthTag().toString("base64"),
    ...(source.format === "files" ? { files: source.files.map((f) => ({ path: f.path, size: f.size })) } : {}),
  };
}

/** A payload fetched into a temporary folder; `dispose` removes it. */
export interface FetchedPayload {
  files: AsyncIterable<DeployFile>;
  dispose(): Promise<void>;
}

/**
 * Streams the payload at `key` into a temporary file, decrypting and checking its tag, and
 * yields its files one at a time; null when the object is gone.
 * @throws Error when the payload fails its tag (damaged or of another bundle); ArchiveError
 *   while iterating a zip that breaks the reader's limits.
 */
export async function fetchPayload(storage: Storage, key: string, ref: PayloadRef, zipLimits: Partial<ZipReadLimits>): Promise<FetchedPayload | null> {
  const found = await storage.read(key);
  if (!found) return null;
  const dir = await mkdtemp(path.join(os.tmpdir(), "schemaforge-deploy-upload-"));
  const dispose = () => rm(dir, { recursive: true, force: true, maxRetries: 3 });
  const file = path.join(dir, "payload");
  try {
    const decipher = createDecipheriv("aes-256-gcm", Buffer.from(ref.key, "base64"), Buffer.from(ref.iv, "base64"));
    decipher.setAuthTag(Buffer.from(ref.tag, "base64"));
    await pipeline(found.stream, decipher, createWriteStream(file, { mode: 0o600 }));
  } catch (error) {
    found.stream.destroy();
    await dispose();
    throw error;
  }
  const files = ref.format === "zip" ? zipFiles(file, zipLimits) : sliceFiles(file, ref.files ?? []);
  return { files, dispose };
}

async function* zipFiles(file: string, limits: Partial<ZipReadLimits>): AsyncGenerator<DeployFile> {
  for await (const entry of readZip(file, limits, { inPlace: true })) yield { path: entry.path, content: entry.content };
}

async function* sliceFiles(file: string, files: { path: string; size: number }[]): AsyncGenerator<DeployFile> {
  const handle = await open(file, "r");
  try {
    let offset = 0;
    for (const entry of files) {
      const content = Buffer.alloc(entry.size);
      let read = 0;
      while (read < entry.size) {
        const { bytesRead } = await handle.read(content, read, entry.size - read, offset + read);
        if (bytesRead === 0) throw new Error("The upload payload is shorter than its file list.");
        read += bytesRead;
      }
      offset += entry.size;
      yield { path: entry.path, content };
    }
  } finally {
    await handle.close();
  }
}
