/**
 * After the last statement: what only the whole file can tell. Domains and user types are
 * resolved into their base types, serial pseudo-types and sequence defaults become
 * auto-increment, primary-key columns are marked (and NOT NULL where the engine makes them
 * so), foreign keys without a column list point at the referenced primary key, and names
 * the engine generated (Firebird `RDB$…`/`INTEG_…`, SQL Server `PK__…__hex`) are dropped.
 */
import type { SchemaBuilder } from "./model.ts";
import type { ParsedConstraint, ParsedField, ParsedSchema, ParsedTable } from "./types.ts";

const SERIALS: Record<string, string> = { serial: "integer", serial4: "integer", bigserial: "bigint", serial8: "bigint", smallserial: "smallint", serial2: "smallint" };
const GENERATED_NAME = /^(?:(?:RDB\$|INTEG_)\w*|(?:PK|FK|UQ|DF|CK)__\w*__[0-9A-F]{8,16})$/i;

/** Builds the final ParsedSchema from what the statements built. */
export function finalizeSchema(b: SchemaBuilder): ParsedSchema {
  // indexed loops: this runs once, not optimised, where for-of made an iterator and a result
  // object for every column of the schema
  for (let t = 0; t < b.tables.length; t++) {
    const table = b.tables[t]!;
    for (let f = 0; f < table.fields.length; f++) {
      const field = table.fields[f]!;
      resolveType(b, field);
      autoIncrementFromDefault(field);
    }
    dedupeConstraints(table);
    markPrimaryKey(b, table);
  }
  for (const hint of b.autoIncrementHints) {
    const table = b.findTable(hint.table);
    const field = table && b.findField(table, hint.column);
    if (field) field.is_auto_increment = true;
  }
  propagateToPartitions(b);
  for (let t = 0; t < b.tables.length; t++) {
    const table = b.tables[t]!;
    for (let k = 0; k < table.constraints.length; k++) resolveReference(b, table.constraints[k]!);
    for (let k = 0; k < table.constraints.length; k++) {
      const constraint = table.constraints[k]!;
      if (constraint.name && GENERATED_NAME.test(constraint.name)) constraint.name = null;
    }
    if (table.indexes?.length === 0) delete table.indexes;
    if (table.checks?.length === 0) delete table.checks;
  }
  const schema: ParsedSchema = { dialect: b.dialect, tables: b.tables };
  if (b.enums.size) schema.enums = [...b.enums.values()];
  if (b.domains.size) schema.domains = [...b.domains.values()];
  if (b.sequences.length) schema.sequences = b.sequences;
  return schema;
}

function resolveType(b: SchemaBuilder, field: ParsedField): void {
  const written = field.type_name ?? field.field_type;
  let found = written ? b.findType(written) : null;
  const resolved = found !== null;
  // a builtin type's written name says nothing field_type does not (qualified names stay)
  if (!resolved && field.type_name && !field.type_name.includes(".")) field.type_name = null;
  for (let depth = 0; found?.domain && depth < 10; depth++) {
    const d = found.domain;
    field.field_type = d.field_type;
    field.length ??= d.length;
    field.scale ??= d.scale;
    if (!d.is_nullable) field.is_nullable = false;
    field.default_value ??= d.default_value;
    found = b.findType(d.field_type); // a domain over a domain
  }
  if (found?.enumType) {
    field.field_type = "enum";
    field.enum_values = found.enumType.values;
  }
  if (resolved) return;
  if (b.dialect === "PostgreSQL" && SERIALS[field.field_type]) {
    field.field_type = SERIALS[field.field_type]!;
    field.is_auto_increment = true;
    field.is_nullable = false;
  } else if (b.dialect === "MSSQL" && field.field_type === "sysname") {
    field.type_name = "sysname";
    field.field_type = "nvarchar";
    field.length = 128;
  } else if (b.dialect === "MySQL" && field.field_type === "serial") {
    field.field_type = "bigint";
    field.is_unsigned = true;
    field.is_auto_increment = true;
    field.is_nullable = false;
  }
}

/** A default drawn from a sequence (pg_dump's serial columns, T-SQL NEXT VALUE FOR). */
function autoIncrementFromDefault(field: ParsedField): void {
  const value = field.default_value;
  if (value && /^(?:nextval\s*\(|next\s+value\s+for\s|gen_id\s*\()/i.test(value)) field.is_auto_increment = true;
}

function dedupeConstraints(table: ParsedTable): void {
  const seen = new Set<string>();
  table.constraints = table.constraints.filter((k) => {
    const key = `${k.type}:${k.columns.join(",")}:${k.references_table ?? ""}:${(k.references_columns ?? []).join(",")}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const pks = table.constraints.filter((k) => k.type === "primary_key");
  for (const extra of pks.slice(1)) table.constraints.splice(table.constraints.indexOf(extra), 1);
}

function markPrimaryKey(b: SchemaBuilder, table: ParsedTable): void {
  const pk = table.constraints.find((k) => k.type === "primary_key");
  if (!pk) return;
  const withoutRowid = table.options?.without_rowid === "true";
  for (const column of pk.columns) {
    const field = b.findField(table, column);
    if (!field) continue;
    field.is_primary_key = true;
    // SQLite keeps NULL allowed in rowid-table keys (a documented legacy quirk)
    if (b.dialect !== "SQLite" || withoutRowid) field.is_nullable = false;
  }
  if (b.dialect === "SQLite" && !withoutRowid && pk.columns.length === 1) {
    const field = b.findField(table, pk.columns[0]!);
    // INTEGER PRIMARY KEY is the rowid: SQLite assigns it when an insert leaves it out
    if (field && field.field_type === "integer") field.is_auto_increment = true;
  }
}

/** PostgreSQL gives every partition the keys of its partitioned parent. */
function propagateToPartitions(b: SchemaBuilder): void {
  for (const table of b.tables) {
    const parentName = table.options?.partition_of;
    if (!parentName) continue;
    const parent = b.findTable({ name: parentName, schema: table.options?.partition_of_schema ?? null });
    if (!parent) continue;
    const present = new Set(table.constraints.map((k) => `${k.type}:${k.columns.join()}`));
    for (const k of parent.constraints) {
      const signature = `${k.type}:${k.columns.join()}`;
      if (present.has(signature)) continue;
      present.add(signature);
      table.constraints.push({ ...k, name: null, columns: [...k.columns], inherited: true });
    }
    dedupeConstraints(table);
    markPrimaryKey(b, table);
  }
}

function resolveReference(b: SchemaBuilder, k: ParsedConstraint): void {
  if (k.type !== "foreign_key" || k.references_columns !== null || !k.references_table) return;
  const target = b.findTable({ schema: k.references_schema ?? null, name: k.references_table });
  const pk = target?.constraints.find((c) => c.type === "primary_key");
  k.references_columns = pk ? [...pk.columns] : null;
}
