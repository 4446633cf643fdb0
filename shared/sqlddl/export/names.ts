/**
 * Identifiers and literals as each target dialect writes them: quoted in the dialect's own
 * style (so reserved words and mixed case survive), string literals with the dialect's
 * escaping, and a name allocator that keeps constraint and index names unique where the
 * engine needs them unique (schema-wide in PostgreSQL and SQL Server, database-wide for
 * MySQL foreign keys and Firebird) and within the engine's length limit.
 */
import type { Dialect } from "../types.ts";

/** Longest identifier each engine accepts (Firebird 4 and later: 63 characters). */
export const MAX_NAME: Record<Dialect, number> = { PostgreSQL: 63, MySQL: 64, SQLite: 1000, MSSQL: 128, Firebird: 63 };

/** An identifier quoted for the target dialect. */
export function quoteIdent(dialect: Dialect, name: string): string {
  switch (dialect) {
    case "MySQL":
      return `\`${name.replace(/`/g, "``")}\``;
    case "MSSQL":
      return `[${name.replace(/]/g, "]]")}]`;
    default:
      return `"${name.replace(/"/g, '""')}"`;
  }
}

/** A string literal for the target dialect. */
export function literal(dialect: Dialect, value: string): string {
  const body = value.replace(/'/g, "''");
  if (dialect === "MySQL") return `'${body.replace(/\\/g, "\\\\")}'`;
  if (dialect === "MSSQL") return `N'${body}'`;
  return `'${body}'`;
}

/** Hands out names that are unique (case-insensitively) and short enough for the engine. */
export class NameAllocator {
  private readonly used = new Set<string>();
  /** Per wanted name, the suffix to try next: names are never freed, so lower ones stay taken. */
  private readonly nextSuffix = new Map<string, number>();
  private readonly max: number;

  constructor(dialect: Dialect, reserved: Iterable<string> = []) {
    this.max = MAX_NAME[dialect];
    for (const name of reserved) this.used.add(name.toLowerCase());
  }

  /** `wanted` if free, else `wanted_2`, `wanted_3`, … (truncated to the engine's limit). */
  take(wanted: string): string {
    let name = wanted.slice(0, this.max);
    const key = wanted.toLowerCase();
    let n = this.nextSuffix.get(key) ?? 2;
    // 3,000 tables each with an index called created_idx would otherwise retry every suffix each time
    while (this.used.has(name.toLowerCase())) {
      const suffix = `_${n++}`;
      name = `${wanted.slice(0, this.max - suffix.length)}${suffix}`;
    }
    this.nextSuffix.set(key, n);
    this.used.add(name.toLowerCase());
    return name;
  }

  /** Marks a name as taken without allocating. */
  reserve(name: string): void {
    this.used.add(name.toLowerCase());
  }
}
