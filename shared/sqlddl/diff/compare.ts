/**
 * What changed between two parsed schemas: tables added and removed, and per table the
 * columns added, removed and modified (type, size, nullability, default, auto-increment)
 * and the keys added and removed. Tables pair by schema-qualified name (the default schema
 * matches no schema), columns by name; keys by what they are, not by their names. Every
 * pairing goes through a map, so the comparison is linear in the size of the schemas.
 */
import { sameType } from "../export/typeKinds.ts";
import { tableKey } from "../schemaIndex.ts";
import type { Dialect, ParsedConstraint, ParsedField, ParsedIndex, ParsedSchema, ParsedTable } from "../types.ts";

/** One attribute of a column before and after. */
export interface Change {
  from: unknown;
  to: unknown;
}

/** A column that exists on both sides but changed. */
export interface ColumnChange {
  name: string;
  /** `sqlite_autoincrement` is compared between two SQLite schemas only (the keyword exists there alone). */
  changes: Partial<Record<"type" | "is_nullable" | "default_value" | "is_auto_increment" | "sqlite_autoincrement", Change>>;
}

/** What changed in a table that exists on both sides. */
export interface TableChanges {
  added_columns: string[];
  removed_columns: string[];
  modified_columns: ColumnChange[];
  added_constraints: ParsedConstraint[];
  removed_constraints: ParsedConstraint[];
}

/** The comparison, with the table objects the migration needs. */
export interface Comparison {
  added: ParsedTable[];
  removed: ParsedTable[];
  modified: { from: ParsedTable; to: ParsedTable; name: string; changes: TableChanges; addedIndexes: ParsedIndex[]; removedIndexes: ParsedIndex[] }[];
}

/** The name a table is reported under: `schema.table` outside the default schema. */
export function displayName(table: ParsedTable): string {
  const key = tableKey(table.schema_name, table.table_name);
  return key.includes(".") ? `${table.schema_name}.${table.table_name}` : table.table_name;
}

/** Compares two schemas (see the module comment). */
export function compareSchemas(from: ParsedSchema, to: ParsedSchema): Comparison {
  const pg = from.dialect === "PostgreSQL" && to.dialect === "PostgreSQL";
  const key = (t: ParsedTable) => tableKey(t.schema_name, t.table_name, pg ? "PostgreSQL" : undefined);
  const before = new Map(from.tables.map((t) => [key(t), t]));
  const after = new Map(to.tables.map((t) => [key(t), t]));
  const result: Comparison = { added: [], removed: [], modified: [] };
  for (const [k, table] of after) if (!before.has(k)) result.added.push(table);
  for (const [k, table] of before) {
    const next = after.get(k);
    if (!next) {
      result.removed.push(table);
      continue;
    }
    const changes = compareTables(table, from.dialect, next, to.dialect, pg);
    const indexes = compareIndexes(table, next);
    const changed = Object.values(changes).some((list) => list.length > 0) || indexes.added.length > 0 || indexes.removed.length > 0;
    if (changed) result.modified.push({ from: table, to: next, name: displayName(next), changes, addedIndexes: indexes.added, removedIndexes: indexes.removed });
  }
  return result;
}

function compareTables(a: ParsedTable, aDialect: Dialect, b: ParsedTable, bDialect: Dialect, exact: boolean): TableChanges {
  const fold = (s: string) => (exact ? s : s.toLowerCase());
  const byName = (t: ParsedTable) => {
    const map = new Map<string, ParsedField>();
    for (const f of t.fields) if (!map.has(fold(f.field_name))) map.set(fold(f.field_name), f);
    return map;
  };
  const aFields = byName(a);
  const bFields = byName(b);
  const changes: TableChanges = { added_columns: [], removed_columns: [], modified_columns: [], added_constraints: [], removed_constraints: [] };
  for (const f of b.fields) if (!aFields.has(fold(f.field_name))) changes.added_columns.push(f.field_name);
  for (const f of a.fields) {
    const g = bFields.get(fold(f.field_name));
    if (!g) {
      changes.removed_columns.push(f.field_name);
      continue;
    }
    const column = compareColumns(f, aDialect, g, bDialect);
    if (Object.keys(column.changes).length > 0) changes.modified_columns.push(column);
  }
  const sig = (k: ParsedConstraint) => constraintSignature(k, fold);
  const before = new Set(a.constraints.map(sig));
  const after = new Set(b.constraints.map(sig));
  changes.added_constraints = b.constraints.filter((k) => !before.has(sig(k)));
  changes.removed_constraints = a.constraints.filter((k) => !after.has(sig(k)));
  return changes;
}

function compareColumns(a: ParsedField, aDialect: Dialect, b: ParsedField, bDialect: Dialect): ColumnChange {
  const change: ColumnChange = { name: b.field_name, changes: {} };
  const typeText = (f: ParsedField) => `${f.field_type}${f.length !== null ? `(${f.length}${f.scale !== null ? `,${f.scale}` : ""})` : ""}${f.is_unsigned ? " unsigned" : ""}`;
  if (!sameType(a, aDialect, b, bDialect)) change.changes.type = { from: typeText(a), to: typeText(b) };
  if (a.is_nullable !== b.is_nullable) change.changes.is_nullable = { from: a.is_nullable, to: b.is_nullable };
  if (normalizeDefault(a.default_value) !== normalizeDefault(b.default_value) && !(a.is_auto_increment && b.is_auto_increment)) {
    change.changes.default_value = { from: a.default_value, to: b.default_value };
  }
  if (a.is_auto_increment !== b.is_auto_increment) change.changes.is_auto_increment = { from: a.is_auto_increment, to: b.is_auto_increment };
  else if (aDialect === "SQLite" && bDialect === "SQLite" && (a.sqlite_autoincrement ?? false) !== (b.sqlite_autoincrement ?? false)) {
    change.changes.sqlite_autoincrement = { from: a.sqlite_autoincrement ?? false, to: b.sqlite_autoincrement ?? false };
  }
  return change;
}

/** Defaults compare without case (outside quotes) and whitespace differences. */
export function normalizeDefault(value: string | null): string | null {
  if (value === null) return null;
  return value
    .trim()
    .split(/('(?:[^']|'')*')/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/\s+/g, " ").toLowerCase()))
    .join("");
}

const action = (a: string | null) => (a === null || a === "NO ACTION" ? "NO ACTION" : a);

/** What a key is: type, columns, and for a foreign key its target and actions. */
export function constraintSignature(k: ParsedConstraint, fold: (s: string) => string = (s) => s.toLowerCase()): string {
  const cols = (list: string[] | null) => (list ?? []).map(fold).join(",");
  if (k.type !== "foreign_key") return `${k.type}(${cols(k.columns)})`;
  return `fk(${cols(k.columns)})->${fold(k.references_table ?? "")}(${cols(k.references_columns)}) d=${action(k.on_delete)} u=${action(k.on_update)}`;
}

function compareIndexes(a: ParsedTable, b: ParsedTable): { added: ParsedIndex[]; removed: ParsedIndex[] } {
  const sig = (i: ParsedIndex) => `${i.unique}:${i.columns.join(",").toLowerCase()}:${i.where ?? ""}`;
  const before = new Set((a.indexes ?? []).map(sig));
  const after = new Set((b.indexes ?? []).map(sig));
  return { added: (b.indexes ?? []).filter((i) => !before.has(sig(i))), removed: (a.indexes ?? []).filter((i) => !after.has(sig(i))) };
}
