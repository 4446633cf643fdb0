/**
 * The size limit of a schema's SQL text (SCHEMA_SQL_MAX_BYTES), shared by the schema routes
 * and the `schemas` section of project bundles so that both refuse the same texts with the
 * same words.
 */
import type { Config } from "../config.ts";

/** "12 KB" or "3.4 MB". */
export function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MB` : `${Math.ceil(bytes / 1024)} KB`;
}

/** The message for SQL text over the configured limit, or null when it fits. */
export function sqlSizeProblem(config: Config, sqlText: string): string | null {
  const bytes = Buffer.byteLength(sqlText, "utf8");
  if (bytes <= config.schemas.sqlMaxBytes) return null;
  return `The SQL text is ${formatBytes(bytes)}; the limit is ${formatBytes(config.schemas.sqlMaxBytes)}.`;
}
