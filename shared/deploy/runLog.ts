/**
 * The log side of a deployment run: every entry scrubbed before it reaches the caller's
 * sink, a failed run ends with one `error` entry naming its code, and upload progress is
 * logged at a steady pace rather than once per file (a generation can hold thousands).
 */
import { DeployError, toDeployError } from "./errors.ts";
import type { Scrubber } from "./scrub.ts";
import type { DeployLog, LogType } from "./types.ts";

/** Typed shortcuts over the caller's log, with scrubbing. */
export interface RunLog {
  info(message: string, metadata?: Record<string, unknown>): Promise<void>;
  success(message: string, metadata?: Record<string, unknown>): Promise<void>;
  warning(message: string, metadata?: Record<string, unknown>): Promise<void>;
  error(message: string, metadata?: Record<string, unknown>): Promise<void>;
}

/** Wraps `log` so every message and metadata value is scrubbed. */
export function createRunLog(log: DeployLog, scrubber: Scrubber): RunLog {
  const write = (type: LogType) => async (message: string, metadata?: Record<string, unknown>) => {
    await log({ type, message: scrubber.text(message), ...(metadata ? { metadata: scrubber.value(metadata) } : {}) });
  };
  return { info: write("info"), success: write("success"), warning: write("warning"), error: write("error") };
}

/**
 * Runs a deployment body: a failure becomes a scrubbed DeployError, is logged as one
 * `error` entry and rethrown.
 * @throws DeployError
 */
export async function runLogged<R>(
  runLog: RunLog,
  scrubber: Scrubber,
  context: string,
  signal: AbortSignal | undefined,
  body: () => Promise<R>,
): Promise<R> {
  try {
    if (signal?.aborted) throw new DeployError("aborted", `${context} was cancelled before it started.`);
    return await body();
  } catch (error) {
    // Once cancelled, whatever broke (a closed connection, mostly) is a consequence of it.
    const failure = signal?.aborted ? new DeployError("aborted", `${context} was cancelled.`) : toDeployError(error, scrubber, context);
    await runLog.error(failure.message, { code: failure.code, retryable: failure.retryable, ...failure.details });
    throw failure;
  }
}

/** Counts uploaded files and logs progress at most every `intervalMs`. */
export class UploadProgress {
  files = 0;
  bytes = 0;
  readonly #runLog: RunLog;
  readonly #intervalMs: number;
  #lastLog = Date.now();

  constructor(runLog: RunLog, intervalMs = 2000) {
    this.#runLog = runLog;
    this.#intervalMs = intervalMs;
  }

  /** Records one uploaded file; logs when the interval has passed. */
  async add(bytes: number): Promise<void> {
    this.files += 1;
    this.bytes += bytes;
    if (Date.now() - this.#lastLog >= this.#intervalMs) {
      this.#lastLog = Date.now();
      await this.#runLog.info(`Uploaded ${this.files} files (${formatBytes(this.bytes)}) so far.`, { files: this.files, bytes: this.bytes });
    }
  }
}

/** `1.5 MB`-style sizes for log messages. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
