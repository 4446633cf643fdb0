/**
 * The migration from one schema to another, ordered so that no foreign key breaks midway:
 * first the foreign keys that go or must be rebuilt (those on columns or keys that change),
 * then removed indexes and keys, removed tables, new tables, column changes, new keys,
 * auto-increment switched on, new indexes, and last every foreign key that must exist.
 */
import { addColumn, addConstraint, dropColumn, enableAutoIncrement, modifyColumn } from "./alterSql.ts";
import { constraintSignature, type Comparison } from "./compare.ts";
import { dropConstraint } from "./dropSql.ts";
import { sqliteMigration } from "./sqliteMigration.ts";
import { addForeignKeys, comments, createIndexes, createTable } from "../export/tableSql.ts";
import { ExportWriter } from "../export/writer.ts";
import { literal } from "../export/names.ts";
import type { Dialect, ParsedConstraint, ParsedSchema, ParsedTable } from "../types.ts";

/** Statements that turn `from` into `to` in `dialect`. */
export function migrationStatements(cmp: Comparison, from: ParsedSchema, to: ParsedSchema, dialect: Dialect): { statements: string[]; notes: string[] } {
  const wFrom = new ExportWriter(from, dialect);
  const wTo = new ExportWriter(to, dialect);
  const kept = new Set(cmp.modified.flatMap((m) => without(m.to.constraints, m.changes.added_constraints)).map((k) => k.name ?? ""));
  for (const t of to.tables) for (const k of t.constraints) if (kept.has(k.name ?? "") && k.name) wTo.names.reserve(k.name);
  if (dialect === "SQLite") return { statements: sqliteMigration(cmp, wFrom, wTo), notes: wTo.notes };
  const out: string[] = [];
  const rebuilt = rebuiltForeignKeys(cmp, wTo);

  // 1. foreign keys that go, or that must be rebuilt around a change
  for (const m of cmp.modified) {
    for (const k of m.changes.removed_constraints.filter((c) => c.type === "foreign_key")) out.push(...dropConstraint(wFrom, m.from, k));
    for (const key of rebuilt.get(m.to) ?? []) out.push(...dropConstraint(wFrom, m.from, fromKey(m.from, key)));
  }
  // 2. indexes and keys that go (MySQL keeps a plain index where a foreign key still needs one)
  for (const m of cmp.modified) {
    for (const i of m.removedIndexes) if (i.name) out.push(dropIndex(wFrom, m.from, i.name));
    for (const k of m.changes.removed_constraints.filter((c) => c.type !== "foreign_key")) {
      if (dialect === "MySQL") out.push(...keepForeignKeyIndex(wFrom, m.from, m.to, k));
      out.push(...dropConstraint(wFrom, m.from, k));
    }
  }
  // 3. tables that go, referencing ones first
  const removed = new Set(cmp.removed);
  const removedOrder = wFrom.index.dependencyOrder().filter((t) => removed.has(t)).reverse();
  for (const table of removedOrder) out.push(`DROP TABLE ${wFrom.ref(table)}`);
  // 4. new tables (in new schemas too), without their foreign keys
  const existing = new Set(wFrom.schemas());
  for (const schema of wTo.schemas().filter((s) => !existing.has(s))) {
    if (dialect === "PostgreSQL") out.push(`CREATE SCHEMA IF NOT EXISTS ${wTo.q(schema)}`);
    if (dialect === "MSSQL") out.push(`IF SCHEMA_ID(${literal(dialect, schema)}) IS NULL EXEC(${literal(dialect, `CREATE SCHEMA ${wTo.q(schema)}`)})`);
  }
  const added = new Set(cmp.added);
  const addedOrder = wTo.index.dependencyOrder().filter((t) => added.has(t));
  for (const table of addedOrder) out.push(createTable(wTo, table), ...createIndexes(wTo, table));
  // 5. columns: added, changed, removed
  for (const m of cmp.modified) {
    const c = m.changes;
    const addedColumns = new Set(c.added_columns);
    for (const f of m.to.fields.filter((f) => addedColumns.has(f.field_name))) out.push(...addColumn(wTo, m.to, f));
    for (const change of c.modified_columns) out.push(...modifyColumn(wTo, m.to, wTo.field(m.to, change.name)!, change));
    for (const name of c.removed_columns) out.push(...dropColumn(wFrom, m.from, name));
  }
  // 6. new primary and unique keys; 7. auto-increment switched on; 8. new indexes
  for (const m of cmp.modified) for (const k of m.changes.added_constraints.filter((c) => c.type !== "foreign_key")) out.push(...addConstraint(wTo, m.to, k));
  for (const m of cmp.modified) {
    for (const change of m.changes.modified_columns.filter((c) => c.changes.is_auto_increment?.to === true)) {
      out.push(...enableAutoIncrement(wTo, m.to, wTo.field(m.to, change.name)!));
    }
  }
  for (const m of cmp.modified) out.push(...createIndexes(wTo, m.to, m.addedIndexes));
  // 9. every foreign key that must exist: of new tables, new ones, rebuilt ones
  for (const table of addedOrder) out.push(...addForeignKeys(wTo, table));
  for (const m of cmp.modified) {
    const keys = [...m.changes.added_constraints.filter((c) => c.type === "foreign_key"), ...(rebuilt.get(m.to) ?? [])];
    out.push(...addForeignKeys(wTo, m.to, keys));
  }
  for (const table of addedOrder) out.push(...comments(wTo, table));
  return { statements: out, notes: [...new Set([...wFrom.notes, ...wTo.notes])] };
}

/** The keys of `all` that are not in `some` (the same objects). */
function without(all: ParsedConstraint[], some: ParsedConstraint[]): ParsedConstraint[] {
  const skip = new Set(some);
  return all.filter((k) => !skip.has(k));
}

/** Kept foreign keys whose columns change type, or whose target key is dropped: drop and add again (by table). */
function rebuiltForeignKeys(cmp: Comparison, w: ExportWriter): Map<ParsedTable, ParsedConstraint[]> {
  const retyped = new Map<ParsedTable, Set<string>>();
  const droppedKeys = new Map<ParsedTable, string[]>();
  for (const m of cmp.modified) {
    retyped.set(m.to, new Set(m.changes.modified_columns.filter((c) => c.changes.type).map((c) => c.name.toLowerCase())));
    droppedKeys.set(m.to, m.changes.removed_constraints.filter((k) => k.type !== "foreign_key").map((k) => k.columns.join(",").toLowerCase()));
  }
  const out = new Map<ParsedTable, ParsedConstraint[]>();
  for (const m of cmp.modified) {
    const keys: ParsedConstraint[] = [];
    for (const k of without(m.to.constraints, m.changes.added_constraints)) {
      if (k.type !== "foreign_key") continue;
      const target = w.referenced(k);
      const own = k.columns.some((c) => retyped.get(m.to)?.has(c.toLowerCase()));
      const theirs = target && (k.references_columns ?? []).some((c) => retyped.get(target)?.has(c.toLowerCase()));
      const keyGone = target && droppedKeys.get(target)?.includes((k.references_columns ?? []).join(",").toLowerCase());
      if (own || theirs || keyGone) keys.push(k);
    }
    if (keys.length > 0) out.set(m.to, keys);
  }
  return out;
}

/** The same foreign key as the old schema has it (its name there). */
function fromKey(table: ParsedTable, k: ParsedConstraint): ParsedConstraint {
  return table.constraints.find((c) => constraintSignature(c) === constraintSignature(k)) ?? k;
}

function dropIndex(w: ExportWriter, table: ParsedTable, name: string): string {
  if (w.target === "MySQL") return `ALTER TABLE ${w.ref(table)} DROP INDEX ${w.q(name)}`;
  if (w.target === "MSSQL") return `DROP INDEX ${w.q(name)} ON ${w.ref(table)}`;
  const schema = w.exportedName(table).schema;
  return `DROP INDEX ${w.target === "PostgreSQL" && schema ? `${w.q(schema)}.` : ""}${w.q(name)}`;
}

/** MySQL will not drop a key a foreign key uses as its index: give the foreign key its own first. */
function keepForeignKeyIndex(w: ExportWriter, from: ParsedTable, to: ParsedTable, k: ParsedConstraint): string[] {
  const key = k.columns.join(",").toLowerCase();
  return to.constraints
    .filter((fk) => fk.type === "foreign_key" && key.startsWith(fk.columns.join(",").toLowerCase()))
    .map((fk) => `ALTER TABLE ${w.ref(from)} ADD INDEX (${fk.columns.map((c) => w.q(c)).join(", ")})`);
}
