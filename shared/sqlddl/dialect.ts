/**
 * Dialect names: the five `database_type` values of DESIGN §9 and the aliases users type.
 */
import { own } from "../dict.ts";
import { DIALECTS, type Dialect } from "./types.ts";

const aliases: Record<string, Dialect> = {
  mysql: "MySQL",
  mariadb: "MySQL",
  postgresql: "PostgreSQL",
  postgres: "PostgreSQL",
  pg: "PostgreSQL",
  pgsql: "PostgreSQL",
  sqlite: "SQLite",
  sqlite3: "SQLite",
  mssql: "MSSQL",
  "ms-sql": "MSSQL",
  sqlserver: "MSSQL",
  "sql-server": "MSSQL",
  "sql server": "MSSQL",
  tsql: "MSSQL",
  firebird: "Firebird",
  interbase: "Firebird",
};

/** Maps a dialect name or alias (case-insensitive) to its canonical name; null when unknown. */
export function normalizeDialect(name: string): Dialect | null {
  const key = name.trim().toLowerCase();
  // Own entries only: "__proto__" or "constructor" would otherwise find Object's (a 500 once, found by fuzzing).
  return own(aliases, key) ?? DIALECTS.find((d) => d.toLowerCase() === key) ?? null;
}
