/**
 * Deployments of the upload form (`POST /deployments/upload`): files and credentials come
 * with the request and belong to no project. The API seals the credentials (AES-256-GCM
 * under APP_KEY) into one short-lived storage object, the bundle, and streams the files,
 * encrypted, into a second one beside it (uploadPayload.ts), so neither side ever holds the
 * files whole in memory; the job's payload carries only the bundle's key, so no credential
 * reaches a job record. The worker opens the bundle, deploys the files one at a time with an
 * in-memory state and log, removes both objects and returns the outcome with the log.
 */
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { ArchiveError } from "../archive/errors.ts";
import { open, seal } from "../crypto.ts";
import { DeployError } from "../deploy/errors.ts";
import { deploy, type DeployTarget } from "../deploy/index.ts";
import { scrubberFor } from "../deploy/scrub.ts";
import { memoryState } from "../deploy/state.ts";
import type { DeployFile, LogEntry } from "../deploy/types.ts";
import type { Logger } from "../logger.ts";
import type { NetworkPolicy } from "../net/networkGuard.ts";
import type { Storage } from "../storage/storage.ts";
import { fetchPayload, payloadKey, payloadRef, storePayload, type FetchedPayload, type UploadSource } from "./uploadPayload.ts";

/**
 * How long a sealed upload waits for its job; the storage sweep removes it a grace period
 * after that (workers/tasks/storage__sweep.ts), if its job has not removed it by then.
 */
const UPLOAD_TTL_MS = 60 * 60 * 1000;

const sealedUpload = z.object({
  method: z.enum(["ftp", "ssh"]),
  config: z.record(z.string(), z.unknown()),
  /** The files, streamed into their own object. */
  payload: payloadRef.optional(),
  /** Bundles written before the files moved out (base64 inline); read for jobs still queued. */
  files: z.array(z.object({ path: z.string(), content: z.string() })).optional(),
});

/** Seals an upload into storage, its files streamed from `source`; returns the bundle's key (the job's payload). */
export async function storeUpload(storage: Storage, appKey: Buffer, target: DeployTarget & { method: "ftp" | "ssh" }, source: UploadSource): Promise<string> {
  const key = `deployment-uploads/${randomBytes(18).toString("base64url")}`;
  const expiresAt = new Date(Date.now() + UPLOAD_TTL_MS);
  const payload = await storePayload(storage, payloadKey(key), source, expiresAt);
  const body = JSON.stringify({ method: target.method, config: target.config, payload });
  await storage.put(key, seal(appKey, body), { contentType: "application/octet-stream", expiresAt });
  return key;
}

/** A log entry of an upload deployment, as its result carries it. */
export interface UploadLogEntry extends LogEntry {
  created_at: string;
}

/** The outcome of an upload deployment (the job's result and the route's answer). */
export interface UploadOutcome {
  status: "succeeded" | "failed";
  summary: string | null;
  files: number;
  bytes: number;
  error: { code: string; message: string } | null;
  logs: UploadLogEntry[];
}

/** The outcome when the bundle is gone: its job came after the storage sweep removed it. */
export const UPLOAD_EXPIRED = { code: "upload_expired", message: "The uploaded files are no longer available (the upload waited too long to run); upload them again." };
/** The outcome when the bundle cannot be opened on the last attempt (sealed under another APP_KEY, or damaged). */
export const UPLOAD_UNREADABLE = { code: "upload_unreadable", message: "The uploaded files could not be read back; upload them again." };

/**
 * Runs the sealed upload at `key`; a deployment failure is an outcome, not an error. The
 * bundle holds credentials, so it is removed as soon as its job is done: after a success, a
 * deployment failure, or any failure of the last attempt; only an attempt that will be
 * retried leaves it for the retry (the storage sweep removes what a lost job leaves).
 * @throws Error on unexpected failures (a lost database connection, a crash) and, before the
 *   last attempt, when the upload cannot be opened (a worker with a different APP_KEY).
 */
export async function runUpload(
  storage: Storage,
  appKey: Buffer,
  key: string,
  options: { runId: string; network: NetworkPolicy; signal: AbortSignal; finalAttempt: boolean; log: Logger; maxFiles: number },
): Promise<UploadOutcome> {
  let fetched: FetchedPayload | null = null;
  const discard = async () => {
    try {
      await fetched?.dispose();
      await storage.delete(payloadKey(key));
      await storage.delete(key);
    } catch (error) {
      // The outcome stands; the sweep removes the bundle after its expiry.
      options.log.warn({ err: error, upload_key: key }, "could not remove the upload bundle; the storage sweep will");
    }
  };
  const sealed = await storage.readBuffer(key);
  if (!sealed) {
    // The sweep took the bundle; its files go with it.
    await discard();
    return failed(UPLOAD_EXPIRED, []);
  }
  let upload: z.infer<typeof sealedUpload>;
  try {
    upload = sealedUpload.parse(JSON.parse(open(appKey, sealed).toString("utf8")));
  } catch (error) {
    if (!options.finalAttempt) throw error;
    await discard();
    return failed(UPLOAD_UNREADABLE, []);
  }
  const target = { method: upload.method, config: upload.config } as DeployTarget;
  const scrubber = scrubberFor(upload.config);
  const logs: UploadLogEntry[] = [];
  let files: Iterable<DeployFile> | AsyncIterable<DeployFile>;
  if (upload.payload) {
    try {
      fetched = await fetchPayload(storage, payloadKey(key), upload.payload, { maxEntries: options.maxFiles });
    } catch (error) {
      if (!options.finalAttempt) throw error;
      await discard();
      return failed(UPLOAD_UNREADABLE, []);
    }
    if (!fetched) {
      await discard();
      return failed(UPLOAD_EXPIRED, []);
    }
    files = fetched.files;
  } else {
    files = (upload.files ?? []).map((file) => ({ path: file.path, content: Buffer.from(file.content, "base64") }));
  }
  try {
    const result = await deploy(target, {
      deploymentId: options.runId,
      files,
      log: async (entry) => {
        logs.push({ ...scrubber.value(entry), created_at: new Date().toISOString() });
      },
      signal: options.signal,
      state: memoryState(),
      network: options.network,
    });
    await discard();
    return { status: "succeeded", summary: scrubber.text(result.summary), files: result.files, bytes: result.bytes, error: null, logs };
  } catch (error) {
    // Anything else (a lost database connection, a crash) leaves the upload for the retry,
    // unless no retry will come.
    if (!(error instanceof DeployError) && !(error instanceof ArchiveError)) {
      if (options.finalAttempt) await discard();
      throw error;
    }
    await discard();
    return failed({ code: error.code, message: scrubber.text(error.message) }, logs);
  } finally {
    // The decrypted copy never outlives the attempt (a retry fetches it again).
    await fetched?.dispose();
  }
}

const failed = (error: { code: string; message: string }, logs: UploadLogEntry[]): UploadOutcome => ({
  status: "failed",
  summary: null,
  files: 0,
  bytes: 0,
  error,
  logs,
});
