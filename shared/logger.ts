/**
 * Structured logging with pino. One root logger per process; request and job loggers are
 * children carrying their ids. Secrets never reach a log line: the redact list covers the
 * field names under which credentials travel.
 */
import { pino, type Logger } from "pino";

export type { Logger } from "pino";

const redactPaths = [
  "password",
  "*.password",
  "*.*.password",
  "secret",
  "*.secret",
  "*.secret_key",
  "*.access_token",
  "*.refresh_token",
  "*.private_key",
  "*.app_password",
  "req.headers.authorization",
  "req.headers.cookie",
  "headers.authorization",
];

/** Creates the process's root logger at the given level. */
export function createLogger(level: string, name = "schemaforge"): Logger {
  return pino({
    name,
    level,
    redact: { paths: redactPaths, censor: "[redacted]" },
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}
