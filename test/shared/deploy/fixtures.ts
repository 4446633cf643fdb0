/**
 * Generations and log capture for the deployer tests.
 */
import type { DeployFile, LogEntry } from "../../../shared/deploy/types.ts";

/** A small generation: nested folders, an empty file, a binary file, a name with spaces. */
export function generation(version: string): DeployFile[] {
  return [
    { path: "index.php", content: Buffer.from(`<?php echo "version ${version}";\n`) },
    { path: "app/Models/User.php", content: Buffer.from(`<?php class User { /* ${version} */ }\n`) },
    { path: "app/Models/Post.php", content: Buffer.from(`<?php class Post { /* ${version} */ }\n`) },
    { path: "app/Http/Controllers/UserController.php", content: Buffer.from(`<?php // ${version}\n`) },
    { path: "config/empty.ini", content: Buffer.alloc(0) },
    { path: "public/logo.bin", content: Buffer.from([0, 1, 2, 255, 254, 10, 13, 0]) },
    { path: "docs/read me.txt", content: Buffer.from(`notes for ${version}\n`) },
  ];
}

/** Many files of one size under a few folders (for pool and benchmark runs). */
export function manyFiles(count: number, size: number): DeployFile[] {
  return Array.from({ length: count }, (_, i) => ({ path: `dir${i % 10}/file${i}.txt`, content: Buffer.alloc(size, 97 + (i % 26)) }));
}

/** The files as a map path → text, comparable with `asText(readTree(...))`. */
export function expected(files: DeployFile[]): Record<string, string> {
  return Object.fromEntries([...files].sort((a, b) => a.path.localeCompare(b.path)).map((f) => [f.path, f.content.toString("latin1")]));
}

/** A log sink that keeps the entries. */
export function captureLog(): { entries: LogEntry[]; log: (entry: LogEntry) => Promise<void> } {
  const entries: LogEntry[] = [];
  return { entries, log: async (entry) => void entries.push(entry) };
}

/** Every text a deployment let out: its log entries and its error, as one string. */
export function exposedText(entries: LogEntry[], error?: unknown): string {
  const errorText = error instanceof Error ? `${error.message} ${JSON.stringify(error)}` : "";
  return `${JSON.stringify(entries)} ${errorText}`;
}
