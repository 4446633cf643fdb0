/**
 * Dropping a key the migration must remove. With a name the statement is direct; without
 * one (the engine named it) the name is looked up in the engine's catalog by the key's
 * columns at run time: a PostgreSQL DO block, a MySQL prepared statement, T-SQL dynamic
 * SQL. A PostgreSQL "unique key" may also be a unique index, so its lookup tries both.
 */
import { literal } from "../export/names.ts";
import type { ExportWriter } from "../export/writer.ts";
import type { ParsedConstraint, ParsedTable } from "../types.ts";

/** Statements that drop `k` from `table` (as the `from` writer names things). */
export function dropConstraint(w: ExportWriter, table: ParsedTable, k: ParsedConstraint): string[] {
  const ref = w.ref(table);
  switch (w.target) {
    case "PostgreSQL":
      if (k.name && k.type !== "unique") return [`ALTER TABLE ${ref} DROP CONSTRAINT ${w.q(k.name)}`];
      return [pgLookupDrop(w, table, k)];
    case "MySQL":
      if (k.type === "primary_key") return [`ALTER TABLE ${ref} DROP PRIMARY KEY`];
      if (k.name) return [`ALTER TABLE ${ref} DROP ${k.type === "foreign_key" ? "FOREIGN KEY" : "INDEX"} ${w.q(k.name)}`];
      return mysqlLookupDrop(w, table, k);
    case "MSSQL":
      if (k.name) return [`ALTER TABLE ${ref} DROP CONSTRAINT ${w.q(k.name)}`];
      return [mssqlLookupDrop(w, table, k)];
    case "Firebird":
      if (k.name) return [`ALTER TABLE ${ref} DROP CONSTRAINT ${w.q(k.name)}`];
      return [`-- drop by hand: the unnamed ${k.type.replace("_", " ")} (${k.columns.join(", ")}) of ${table.table_name} (Firebird named it; see RDB$RELATION_CONSTRAINTS)`];
    case "SQLite":
      return []; // SQLite rebuilds the table instead
  }
}

const pgColumns = (keyArray: string, rel: string) =>
  `(SELECT array_agg(a.attname::text ORDER BY k.ord) FROM unnest(${keyArray}) WITH ORDINALITY k(num, ord) JOIN pg_attribute a ON a.attrelid = ${rel} AND a.attnum = k.num)`;

function pgLookupDrop(w: ExportWriter, table: ParsedTable, k: ParsedConstraint): string {
  const rel = literal(w.target, w.ref(table));
  const cols = `ARRAY[${k.columns.map((c) => literal(w.target, c)).join(", ")}]::text[]`;
  const type = { primary_key: "p", unique: "u", foreign_key: "f" }[k.type];
  const target = k.type === "foreign_key" && w.referenced(k) ? ` AND c.confrelid = ${literal(w.target, w.ref(w.referenced(k)!))}::regclass` : "";
  const byIndex =
    k.type === "unique"
      ? `
  IF found IS NULL THEN
    SELECT i.indexrelid::regclass::text INTO found FROM pg_index i
     WHERE i.indrelid = ${rel}::regclass AND i.indisunique AND NOT i.indisprimary AND ${pgColumns("i.indkey::int2[]", "i.indrelid")} = ${cols};
    IF found IS NOT NULL THEN EXECUTE 'DROP INDEX ' || found; END IF;
    RETURN;
  END IF;`
      : "";
  return `DO $$
DECLARE found text;
BEGIN
  SELECT c.conname INTO found FROM pg_constraint c
   WHERE c.conrelid = ${rel}::regclass AND c.contype = '${type}'${target} AND ${pgColumns("c.conkey", "c.conrelid")} = ${cols}${k.name ? ` AND c.conname = ${literal(w.target, k.name)}` : ""};${byIndex}
  IF found IS NOT NULL THEN EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', ${rel}, found); END IF;
END $$`;
}

function mysqlLookupDrop(w: ExportWriter, table: ParsedTable, k: ParsedConstraint): string[] {
  const name = literal(w.target, w.exportedName(table).name);
  const cols = literal(w.target, k.columns.join(","));
  const find =
    k.type === "foreign_key"
      ? `SELECT CONSTRAINT_NAME FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ${name} AND REFERENCED_TABLE_NAME IS NOT NULL GROUP BY CONSTRAINT_NAME HAVING GROUP_CONCAT(COLUMN_NAME ORDER BY ORDINAL_POSITION) = ${cols} LIMIT 1`
      : `SELECT INDEX_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ${name} AND NON_UNIQUE = 0 AND INDEX_NAME <> 'PRIMARY' GROUP BY INDEX_NAME HAVING GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX) = ${cols} LIMIT 1`;
  const verb = k.type === "foreign_key" ? "FOREIGN KEY" : "INDEX";
  return [
    `SET @sqlddl_name = (${find})`,
    `SET @sqlddl_sql = CONCAT('ALTER TABLE ${w.ref(table).replace(/'/g, "''")} DROP ${verb} \`', REPLACE(@sqlddl_name, '\`', '\`\`'), '\`')`,
    "PREPARE sqlddl_stmt FROM @sqlddl_sql",
    "EXECUTE sqlddl_stmt",
    "DEALLOCATE PREPARE sqlddl_stmt",
  ];
}

function mssqlLookupDrop(w: ExportWriter, table: ParsedTable, k: ParsedConstraint): string {
  const obj = literal(w.target, w.ref(table));
  const cols = literal(w.target, k.columns.join(","));
  const find =
    k.type === "foreign_key"
      ? `SELECT TOP 1 @name = fk.name FROM sys.foreign_keys fk WHERE fk.parent_object_id = OBJECT_ID(${obj}) AND (SELECT STRING_AGG(c.name, ',') WITHIN GROUP (ORDER BY fc.constraint_column_id) FROM sys.foreign_key_columns fc JOIN sys.columns c ON c.object_id = fc.parent_object_id AND c.column_id = fc.parent_column_id WHERE fc.constraint_object_id = fk.object_id) = ${cols}`
      : `SELECT TOP 1 @name = kc.name FROM sys.key_constraints kc JOIN sys.indexes i ON i.object_id = kc.parent_object_id AND i.index_id = kc.unique_index_id WHERE kc.parent_object_id = OBJECT_ID(${obj}) AND kc.type = '${k.type === "primary_key" ? "PK" : "UQ"}' AND (SELECT STRING_AGG(c.name, ',') WITHIN GROUP (ORDER BY ic.key_ordinal) FROM sys.index_columns ic JOIN sys.columns c ON c.object_id = ic.object_id AND c.column_id = ic.column_id WHERE ic.object_id = i.object_id AND ic.index_id = i.index_id AND ic.key_ordinal > 0) = ${cols}`;
  return `DECLARE @name sysname; ${find}; IF @name IS NOT NULL EXEC(N'ALTER TABLE ${w.ref(table).replace(/'/g, "''")} DROP CONSTRAINT [' + REPLACE(@name, ']', ']]') + N']')`;
}

/** T-SQL: drop the default constraint of a column (needed before it changes or goes). */
export function mssqlDropDefault(w: ExportWriter, table: ParsedTable, column: string): string {
  const obj = literal(w.target, w.ref(table));
  return `DECLARE @df sysname; SELECT @df = d.name FROM sys.default_constraints d JOIN sys.columns c ON c.object_id = d.parent_object_id AND c.column_id = d.parent_column_id WHERE d.parent_object_id = OBJECT_ID(${obj}) AND c.name = ${literal(w.target, column)}; IF @df IS NOT NULL EXEC(N'ALTER TABLE ${w.ref(table).replace(/'/g, "''")} DROP CONSTRAINT [' + REPLACE(@df, ']', ']]') + N']')`;
}
