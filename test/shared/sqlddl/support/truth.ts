/**
 * What an engine's catalog says a schema is (the truth the parser is held to), in one
 * engine-neutral shape, and the comparison of a ParsedSchema with it. Each engine module
 * supplies the rules that map a parsed field to the engine's own spelling of its type and
 * to the sizes the engine records (its documented defaults included).
 */
import type { ParsedField, ParsedSchema, ParsedTable } from "../../../../shared/sqlddl/index.ts";

export interface TruthColumn {
  name: string;
  type: string;
  /** Character length or numeric precision, null when the engine records none. */
  length: number | null;
  scale: number | null;
  nullable: boolean;
  autoIncrement: boolean;
  /** SQLite's AUTOINCREMENT keyword on the rowid alias (absent for other engines and other columns). */
  neverReused?: boolean;
  /** The default as the engine prints it (compared between catalogs only, not with the parser). */
  default?: string | null;
}

export interface TruthForeignKey {
  columns: string[];
  refTable: string;
  refColumns: string[];
  onDelete: string;
  onUpdate: string;
}

export interface TruthTable {
  schema: string | null;
  name: string;
  columns: TruthColumn[];
  primaryKey: string[];
  uniques: string[][];
  foreignKeys: TruthForeignKey[];
}

/** How one engine spells and sizes what the parser produced. */
export interface EngineRules {
  /** The engine's name for the parsed field's type (null: not comparable, e.g. computed). */
  typeOf(field: ParsedField): string | null;
  /** Expected [length, scale] in the engine's catalog, or null when the engine keeps no size for the type. */
  sizeOf(field: ParsedField, truth: TruthColumn): [number | null, number | null] | null;
  /** The action a foreign key has when none is declared. */
  defaultAction: string;
  /** Key that pairs a parsed table with a catalog table. */
  tableKey(schema: string | null, name: string): string;
}

const fk = (columns: string[], refTable: string, refColumns: string[], onDelete: string, onUpdate: string) =>
  `(${columns.join(",")}) -> ${refTable}(${refColumns.join(",")}) on delete ${onDelete} on update ${onUpdate}`;

/** Lists every difference between the parsed schema and the catalog (empty: they agree). */
export function compareWithTruth(parsed: ParsedSchema | ParsedTable[], truth: TruthTable[], rules: EngineRules): string[] {
  const tables = Array.isArray(parsed) ? parsed : parsed.tables;
  const problems: string[] = [];
  const byKey = new Map(truth.map((t) => [rules.tableKey(t.schema, t.name), t]));
  const seen = new Set<string>();
  for (const table of tables) {
    const key = rules.tableKey(table.schema_name, table.table_name);
    const real = byKey.get(key);
    if (!real) {
      problems.push(`table ${key}: parsed, but not in the catalog`);
      continue;
    }
    seen.add(key);
    problems.push(...compareTable(table, real, rules).map((p) => `table ${key}: ${p}`));
  }
  for (const key of byKey.keys()) if (!seen.has(key)) problems.push(`table ${key}: in the catalog, but not parsed`);
  return problems;
}

function compareTable(table: ParsedTable, real: TruthTable, rules: EngineRules): string[] {
  const problems: string[] = [];
  const names = (list: { name: string }[]) => list.map((c) => c.name).join(", ");
  const parsedNames = table.fields.map((f) => f.field_name).join(", ");
  if (parsedNames !== names(real.columns)) problems.push(`columns [${parsedNames}] != catalog [${names(real.columns)}]`);
  for (const field of table.fields) {
    const col = real.columns.find((c) => c.name === field.field_name);
    if (!col) continue;
    const where = `column ${field.field_name}`;
    const type = rules.typeOf(field);
    if (type !== null && type !== col.type) problems.push(`${where}: type ${type} != catalog ${col.type}`);
    const size = rules.sizeOf(field, col);
    if (size && (size[0] !== col.length || size[1] !== col.scale)) {
      problems.push(`${where}: size (${size[0]},${size[1]}) != catalog (${col.length},${col.scale})`);
    }
    if (field.is_nullable !== col.nullable) problems.push(`${where}: nullable ${field.is_nullable} != catalog ${col.nullable}`);
    if (field.is_auto_increment !== col.autoIncrement) problems.push(`${where}: auto-increment ${field.is_auto_increment} != catalog ${col.autoIncrement}`);
    if (col.neverReused !== undefined && (field.sqlite_autoincrement ?? false) !== col.neverReused) {
      problems.push(`${where}: AUTOINCREMENT ${field.sqlite_autoincrement ?? false} != catalog ${col.neverReused}`);
    }
    const pk = real.primaryKey.includes(field.field_name);
    if (field.is_primary_key !== pk) problems.push(`${where}: primary key ${field.is_primary_key} != catalog ${pk}`);
  }
  const pk = table.constraints.find((k) => k.type === "primary_key")?.columns ?? [];
  if (pk.join(",") !== real.primaryKey.join(",")) problems.push(`primary key (${pk.join(",")}) != catalog (${real.primaryKey.join(",")})`);
  const uniques = (lists: string[][]) => lists.map((l) => l.join(",")).sort();
  const parsedUniques = uniques(table.constraints.filter((k) => k.type === "unique").map((k) => k.columns));
  if (JSON.stringify(parsedUniques) !== JSON.stringify(uniques(real.uniques))) {
    problems.push(`unique keys [${parsedUniques.join(" | ")}] != catalog [${uniques(real.uniques).join(" | ")}]`);
  }
  const parsedFks = table.constraints
    .filter((k) => k.type === "foreign_key")
    .map((k) => fk(k.columns, k.references_table ?? "?", k.references_columns ?? [], k.on_delete ?? rules.defaultAction, k.on_update ?? rules.defaultAction))
    .sort();
  const realFks = real.foreignKeys.map((k) => fk(k.columns, k.refTable, k.refColumns, k.onDelete, k.onUpdate)).sort();
  for (const k of parsedFks) if (!realFks.includes(k)) problems.push(`foreign key ${k}: parsed, not in the catalog`);
  for (const k of realFks) if (!parsedFks.includes(k)) problems.push(`foreign key ${k}: in the catalog, not parsed`);
  return problems;
}

/** Differences between two catalogs of the same engine (empty: the same structure). */
export function compareTruths(expected: TruthTable[], actual: TruthTable[]): string[] {
  const key = (t: TruthTable) => `${t.schema ?? ""}.${t.name}`;
  const problems: string[] = [];
  const byKey = new Map(actual.map((t) => [key(t), t]));
  const sorted = (list: unknown[]) => list.map((x) => JSON.stringify(x)).sort().join(" | ");
  for (const want of expected) {
    const got = byKey.get(key(want));
    byKey.delete(key(want));
    if (!got) {
      problems.push(`table ${key(want)} missing`);
      continue;
    }
    const where = `table ${key(want)}`;
    const names = (t: TruthTable) => t.columns.map((c) => c.name).join(", ");
    if (names(want) !== names(got)) problems.push(`${where}: columns [${names(want)}] became [${names(got)}]`);
    for (const col of want.columns) {
      const other = got.columns.find((c) => c.name === col.name);
      if (other && JSON.stringify(col) !== JSON.stringify(other)) problems.push(`${where} column ${col.name}: ${JSON.stringify(col)} became ${JSON.stringify(other)}`);
    }
    if (want.primaryKey.join() !== got.primaryKey.join()) problems.push(`${where}: primary key (${want.primaryKey.join()}) became (${got.primaryKey.join()})`);
    if (sorted(want.uniques) !== sorted(got.uniques)) problems.push(`${where}: unique keys ${sorted(want.uniques)} became ${sorted(got.uniques)}`);
    if (sorted(want.foreignKeys) !== sorted(got.foreignKeys)) problems.push(`${where}: foreign keys ${sorted(want.foreignKeys)} became ${sorted(got.foreignKeys)}`);
  }
  for (const extra of byKey.keys()) problems.push(`table ${extra} unexpected`);
  return problems;
}
