/**
 * Structure preserved across dialects: after a schema is exported into another dialect
 * (and that export parsed back), every table still has the same columns in order, the same
 * nullability, primary key, unique keys and foreign keys. Types are not compared here (they
 * change spelling by design); the target engine's catalog checks those separately.
 */
import type { ParsedSchema, ParsedTable } from "../../../../shared/sqlddl/index.ts";

const fold = (s: string) => s.toLowerCase();

/** Finds the exported table for a source table (schemas may be dropped or become prefixes). */
function counterpart(exported: ParsedSchema, table: ParsedTable): ParsedTable | undefined {
  const names = [table.table_name, `${table.schema_name}_${table.table_name}`].map(fold);
  const candidates = exported.tables.filter((t) => names.includes(fold(t.table_name)));
  return candidates.find((t) => fold(t.schema_name ?? "") === fold(table.schema_name ?? "")) ?? candidates.find((t) => fold(t.table_name) === names[1]) ?? candidates[0];
}

/** Differences in structure between a source schema and its export (types excluded). */
export function compareStructure(source: ParsedSchema, exported: ParsedSchema): string[] {
  const problems: string[] = [];
  const sourceName = new Map<string, string>(); // exported table name -> source table name
  for (const table of source.tables) {
    const other = counterpart(exported, table);
    if (other) sourceName.set(fold(other.table_name), fold(table.table_name));
  }
  // a unique key on the primary key's columns adds nothing (PostgreSQL folds it away)
  const pkOf = (t: ParsedTable) => t.constraints.find((k) => k.type === "primary_key")?.columns.join() ?? null;
  const keys = (t: ParsedTable, type: string, exportedSide: boolean) =>
    t.constraints
      .filter((k) => k.type === type && !(type === "unique" && k.columns.join() === pkOf(t)))
      .map((k) => {
        const ref = k.references_table ? fold(k.references_table) : "";
        const refName = exportedSide ? (sourceName.get(ref) ?? ref) : ref;
        return `${k.columns.map(fold).join(",")}${ref ? `->${refName}(${(k.references_columns ?? []).map(fold).join(",")})` : ""}`;
      })
      .sort()
      .filter((k, i, all) => type !== "unique" || all.indexOf(k) === i)
      .join(" | ");
  for (const table of source.tables) {
    const other = counterpart(exported, table);
    const where = `${table.schema_name ? `${table.schema_name}.` : ""}${table.table_name}`;
    if (!other) {
      problems.push(`${where}: not exported`);
      continue;
    }
    // a key column is NOT NULL in every engine but SQLite, whatever the source said
    const cols = (t: ParsedTable) => t.fields.map((f) => `${f.field_name}${f.is_nullable || f.is_primary_key ? "" : " not null"}`).join(", ");
    if (cols(table) !== cols(other)) problems.push(`${where}: columns [${cols(table)}] became [${cols(other)}]`);
    for (const type of ["primary_key", "unique", "foreign_key"]) {
      const want = keys(table, type, false);
      const got = keys(other, type, true);
      if (want !== got) problems.push(`${where}: ${type} [${want}] became [${got}]`);
    }
  }
  return problems;
}
