/**
 * The schema as the statements build it, applied in order as the engine would apply them:
 * CREATE adds, ALTER changes, DROP removes. Names are matched as the dialect matches them
 * (PostgreSQL exactly, after folding unquoted names; the others case-insensitively), and
 * an unqualified reference finds a qualified table (and the other way round). Tables and
 * each table's columns are found through maps by name, beside the ordered lists, so a dump
 * of thousands of tables or a table of tens of thousands of columns parses in linear time.
 */
import type { QualifiedName } from "./cursor.ts";
import { lowerCase } from "./scanner.ts";
import type { Dialect, ParsedDomain, ParsedEnum, ParsedField, ParsedSequence, ParsedTable } from "./types.ts";

/** A column a Firebird trigger (or similar) fills from a generator. */
export interface AutoIncrementHint {
  table: QualifiedName;
  column: string;
}

/** A table's columns by lookup key, valid while `fields` is the same array of the same length. */
interface FieldIndex {
  fields: ParsedField[];
  length: number;
  byKey: Map<string, ParsedField>;
  /** Two columns share a key (LIKE or INHERITS copied one in): renames then rebuild the index. */
  duplicates: boolean;
}

/** The schema under construction, statement by statement. */
export class SchemaBuilder {
  readonly dialect: Dialect;
  readonly tables: ParsedTable[] = [];
  readonly domains = new Map<string, ParsedDomain>();
  readonly enums = new Map<string, ParsedEnum>();
  readonly sequences: ParsedSequence[] = [];
  readonly autoIncrementHints: AutoIncrementHint[] = [];
  private readonly byName = new Map<string, ParsedTable[]>();
  private readonly fieldIndexes = new WeakMap<ParsedTable, FieldIndex>();

  constructor(dialect: Dialect) {
    this.dialect = dialect;
  }

  /** The lookup key of a name in this dialect. */
  key(name: string): string {
    return this.dialect === "PostgreSQL" ? name : lowerCase(name);
  }

  findTable(q: QualifiedName): ParsedTable | undefined {
    const candidates = this.byName.get(this.key(q.name));
    if (!candidates || candidates.length === 0) return undefined;
    if (q.schema === null) return candidates.find((t) => t.schema_name === null || this.isDefaultSchema(t.schema_name)) ?? candidates[0];
    const schema = this.key(q.schema);
    return (
      candidates.find((t) => t.schema_name !== null && this.key(t.schema_name) === schema) ??
      candidates.find((t) => t.schema_name === null)
    );
  }

  /** Adds a table; false when one of that name already exists. */
  addTable(table: ParsedTable): boolean {
    if (this.findExact(table)) return false;
    this.tables.push(table);
    const k = this.key(table.table_name);
    const list = this.byName.get(k);
    if (list) list.push(table);
    else this.byName.set(k, [table]);
    return true;
  }

  dropTable(q: QualifiedName): boolean {
    const table = this.findTable(q);
    if (!table) return false;
    this.tables.splice(this.tables.indexOf(table), 1);
    const list = this.byName.get(this.key(table.table_name))!;
    list.splice(list.indexOf(table), 1);
    return true;
  }

  renameTable(table: ParsedTable, name: string): void {
    const list = this.byName.get(this.key(table.table_name))!;
    list.splice(list.indexOf(table), 1);
    table.table_name = name;
    const k = this.key(name);
    const others = this.byName.get(k);
    if (others) others.push(table);
    else this.byName.set(k, [table]);
  }

  /** The table's column of that name (the first one, should a copy have doubled it). */
  findField(table: ParsedTable, name: string): ParsedField | undefined {
    return this.fieldIndex(table).byKey.get(this.key(name));
  }

  /** Appends a column, keeping the lookup current without a rebuild. */
  addField(table: ParsedTable, field: ParsedField): void {
    const index = this.fieldIndex(table);
    table.fields.push(field);
    index.length = table.fields.length;
    const k = this.key(field.field_name);
    if (index.byKey.has(k)) index.duplicates = true;
    else index.byKey.set(k, field);
  }

  /** Puts `replacement` where `existing` was (MySQL MODIFY/CHANGE). */
  replaceField(table: ParsedTable, existing: ParsedField, replacement: ParsedField): void {
    table.fields[table.fields.indexOf(existing)] = replacement;
    this.reindexed(table, existing, existing.field_name, replacement);
  }

  /** Renames a column in place. */
  renameField(table: ParsedTable, field: ParsedField, name: string): void {
    const old = field.field_name;
    field.field_name = name;
    this.reindexed(table, field, old, field);
  }

  /**
   * The column index of a table. Lists changed behind the builder's back (a new array after a
   * DROP COLUMN filter, columns copied in by LIKE or INHERITS) are noticed by identity and
   * length and indexed again, so only renames and replacements must go through the builder.
   */
  private fieldIndex(table: ParsedTable): FieldIndex {
    const known = this.fieldIndexes.get(table);
    if (known && known.fields === table.fields && known.length === table.fields.length) return known;
    const index: FieldIndex = { fields: table.fields, length: table.fields.length, byKey: new Map(), duplicates: false };
    for (const field of table.fields) {
      const k = this.key(field.field_name);
      if (index.byKey.has(k)) index.duplicates = true;
      else index.byKey.set(k, field);
    }
    this.fieldIndexes.set(table, index);
    return index;
  }

  /** After `before` (named `oldName`) became `after`: moves its entry, or rebuilds when names are doubled. */
  private reindexed(table: ParsedTable, before: ParsedField, oldName: string, after: ParsedField): void {
    const index = this.fieldIndex(table);
    if (index.duplicates) {
      this.fieldIndexes.delete(table);
      return;
    }
    const oldKey = this.key(oldName);
    if (index.byKey.get(oldKey) === before) index.byKey.delete(oldKey);
    const k = this.key(after.field_name);
    if (index.byKey.has(k)) {
      this.fieldIndexes.delete(table); // renamed onto an existing name: the list now doubles it
      return;
    }
    index.byKey.set(k, after);
  }

  /** Domain, user type or enum of that name (schema-qualified or not). */
  findType(name: string): { domain?: ParsedDomain; enumType?: ParsedEnum } | null {
    const bare = name.includes(".") ? name.slice(name.lastIndexOf(".") + 1) : name;
    const k = this.key(bare);
    const domain = this.domains.get(k);
    if (domain) return { domain };
    const enumType = this.enums.get(k);
    return enumType ? { enumType } : null;
  }

  isDefaultSchema(schema: string): boolean {
    const s = lowerCase(schema);
    return s === "public" || s === "dbo" || s === "main";
  }

  private findExact(table: ParsedTable): ParsedTable | undefined {
    const candidates = this.byName.get(this.key(table.table_name)) ?? [];
    const schema = table.schema_name === null ? null : this.key(table.schema_name);
    return candidates.find((t) => (t.schema_name === null ? null : this.key(t.schema_name)) === schema);
  }
}

/** A new, empty table. */
export function newTable(q: QualifiedName): ParsedTable {
  return { table_name: q.name, schema_name: q.schema, comment: null, fields: [], constraints: [], indexes: [], checks: [] };
}
