/**
 * The shared SQL corpus (public sample databases' DDL), found at ../shared/corpus beside the
 * repository. Tests skip with a message when it is absent.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Dialect } from "../../../../shared/sqlddl/index.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");
/** Where the corpus lives (it may not exist). */
export const corpusDir = path.resolve(root, "../shared/corpus");

const folders: Record<Dialect, string> = { MySQL: "mysql", PostgreSQL: "postgresql", SQLite: "sqlite", MSSQL: "mssql", Firebird: "firebird" };

/** One DDL file of the corpus. */
export interface CorpusFile {
  name: string;
  dialect: Dialect;
  text: string;
}

/** The corpus files of a dialect; null when the corpus is absent. */
export function corpusFiles(dialect: Dialect): CorpusFile[] | null {
  const dir = path.join(corpusDir, folders[dialect]);
  if (!existsSync(dir)) return null;
  return readdirSync(dir)
    .filter((f) => f.endsWith(".sql"))
    .sort()
    .map((f) => ({ name: `${folders[dialect]}/${f}`, dialect, text: readFileSync(path.join(dir, f), "utf8") }));
}

/** The message tests print when they skip for want of the corpus. */
export const noCorpus = `SQL corpus not found at ${path.relative(root, corpusDir)} (expected beside the repository); corpus tests skipped`;
