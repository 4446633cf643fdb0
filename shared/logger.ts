/**
 * Structured logging with pino. One root logger per process; request and job loggers are
 * children carrying their ids. Secrets never reach a log line: the redact list covers the
 * field names under which credentials travel.
 */
import { writeFileSync } from "node:fs";
import { pino, type DestinationStream, type Logger } from "pino";
import { LogBatch } from "./logBatch.ts";

export type { Logger } from "pino";

// Exact paths only: wildcard paths make pino walk every logged object, which cost a fifth
// of a request's CPU in the HTTP benchmark. Code never logs request bodies or configs; the
// deployers scrub credentials from their own messages.
const redactPaths = [
  "password",
  "secret",
  "token",
  "access_token",
  "refresh_token",
  "private_key",
  "secret_key",
  "headers.authorization",
  "headers.cookie",
];

/**
 * Characters of log lines gathered before a write, and the longest a line waits when traffic
 * is low. Each asynchronous write wakes a thread-pool thread, which on a busy 2-core machine
 * costs the event loop far more than the write's own work: at 4 KiB the writes took 2.5 % of
 * the HTTP benchmark's CPU, at 12 KiB 0.3 %.
 */
const BATCH_CHARS = 12 * 1024;
const FLUSH_EVERY_MS = 500;

let stdout: LogBatch | undefined;

/**
 * The process's one stdout destination, shared by every logger it creates (one batch, so
 * lines of several loggers never interleave mid-line), with one flush timer and one exit hook.
 * The batching is LogBatch's; sonic-boom (no `minLength`) writes each batch as it comes, or
 * appends it to the write under way.
 */
function stdoutDestination(): LogBatch {
  if (stdout) return stdout;
  const destination = pino.destination({ dest: 1, sync: false });
  const batch = new LogBatch(destination, BATCH_CHARS);
  setInterval(() => batch.flush(), FLUSH_EVERY_MS).unref();
  // At exit only synchronous writes happen: sonic-boom writes a batch on the thread pool, and
  // a write started in an "exit" handler may not run before the process ends (a command's
  // last line went missing that way on a loaded machine). So what sonic-boom holds is written
  // by its flushSync, then the lines still gathered here straight to the descriptor.
  process.once("exit", () => {
    try {
      destination.flushSync();
      const rest = batch.take();
      if (rest) writeFileSync(1, rest);
    } catch {
      // stdout closed: nothing left to save
    }
  });
  return (stdout = batch);
}

/**
 * Creates a root logger at the given level. Lines are written asynchronously (a synchronous
 * write per request line cost 20 % of the HTTP benchmark's CPU) and in batches of about
 * 12 KiB (a write per line cost another 5 %), flushed at least every half second and when the
 * process exits. `sink` replaces stdout (tests read the lines there).
 */
export function createLogger(level: string, name = "schemaforge", sink?: DestinationStream): Logger {
  const options = {
    name,
    level,
    redact: { paths: redactPaths, censor: "[redacted]" },
    base: { pid: process.pid },
    // Epoch milliseconds (pino's default): formatting an ISO date cost 3 % of a simple request.
    timestamp: pino.stdTimeFunctions.epochTime,
  };
  return pino(options, sink ?? stdoutDestination());
}
