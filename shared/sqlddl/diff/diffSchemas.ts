/**
 * `diffSchemas`: the differences between two parsed schemas (spec: added_tables,
 * removed_tables, modified_tables with added/removed/modified columns, plus key changes)
 * and the migration SQL, in the target dialect, that turns the first into the second.
 */
import { compareSchemas, displayName, type TableChanges } from "./compare.ts";
import { migrationStatements } from "./migrate.ts";
import type { Dialect, ParsedSchema } from "../types.ts";

/** The change records of `differences.modified_tables`. */
export type { ColumnChange, TableChanges } from "./compare.ts";

/** What `diffSchemas` returns. */
export interface SchemaDiff {
  differences: {
    added_tables: string[];
    removed_tables: string[];
    /** Table name → its changes; only tables that changed. */
    modified_tables: Record<string, TableChanges>;
  };
  /** Statements in `dialect` that turn `from` into `to`; empty when nothing changed. */
  migration_sql: string;
}

/** Compares two schemas and writes the migration from the first to the second. */
export function diffSchemas(from: ParsedSchema, to: ParsedSchema, dialect: Dialect): SchemaDiff {
  const cmp = compareSchemas(from, to);
  const differences: SchemaDiff["differences"] = {
    added_tables: cmp.added.map(displayName),
    removed_tables: cmp.removed.map(displayName),
    modified_tables: Object.fromEntries(cmp.modified.map((m) => [m.name, m.changes])),
  };
  if (cmp.added.length + cmp.removed.length + cmp.modified.length === 0) return { differences, migration_sql: "" };
  const { statements, notes } = migrationStatements(cmp, from, to, dialect);
  const end = dialect === "MSSQL" ? ";\nGO\n" : ";\n";
  const header = [`-- migration for ${dialect}: ${cmp.added.length} tables added, ${cmp.removed.length} removed, ${cmp.modified.length} changed`, ...notes.map((n) => `-- note: ${n}`)];
  return { differences, migration_sql: `${header.join("\n")}\n\n${statements.map((s) => (s.startsWith("--") ? `${s}\n` : `${s}${end}`)).join("\n")}` };
}
