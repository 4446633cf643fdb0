/**
 * Putting uploaded files into storage for an attachment: the content type is read from the
 * bytes, the name sanitised, the key random under the owner's area. The caller records the
 * rows in its transaction and removes the stored files (`discardStored`) when it fails.
 */
import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import type { Storage } from "../storage/storage.ts";
import { sniffContentType } from "./contentType.ts";
import { sanitizeFileName } from "./fileName.ts";

/** A file part as the multipart middleware hands it over. */
export interface UploadedFile {
  filepath: string;
  size: number;
  originalFilename?: string | null;
}

export const isUploadedFile = (value: unknown): value is UploadedFile =>
  value !== null && typeof value === "object" && typeof (value as UploadedFile).filepath === "string" && typeof (value as UploadedFile).size === "number";

/** A file put into storage, ready to be recorded. */
export interface StoredUpload {
  fileName: string;
  contentType: string;
  byteSize: number;
  storageKey: string;
}

async function head(filepath: string): Promise<Buffer> {
  const handle = await open(filepath, "r");
  try {
    const buffer = Buffer.alloc(4096);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** Stores each file under `attachments/<area>/…`; on a failure removes what it stored and rethrows. */
export async function storeUploads(storage: Storage, area: string, files: UploadedFile[]): Promise<StoredUpload[]> {
  const stored: StoredUpload[] = [];
  try {
    for (const file of files) {
      const contentType = sniffContentType(await head(file.filepath));
      const storageKey = `attachments/${area}/${randomBytes(16).toString("hex")}`;
      const info = await storage.put(storageKey, createReadStream(file.filepath), { contentType });
      stored.push({ fileName: sanitizeFileName(file.originalFilename), contentType, byteSize: info.size, storageKey });
    }
    return stored;
  } catch (error) {
    await discardStored(storage, stored);
    throw error;
  }
}

/** Removes stored uploads whose rows were not recorded. */
export async function discardStored(storage: Storage, stored: StoredUpload[]): Promise<void> {
  await Promise.all(stored.map((s) => storage.delete(s.storageKey).catch(() => false)));
}
