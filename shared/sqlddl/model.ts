/**
 * The schema as the statements build it, applied in order as the engine would apply them:
 * CREATE adds, ALTER changes, DROP removes. Names are matched as the dialect matches them
 * (PostgreSQL exactly, after folding unquoted names; the others case-insensitively), and
 * an unqualified reference finds a qualified table (and the other way round).
 */
import type { QualifiedName } from "./cursor.ts";
import type { Dialect, ParsedDomain, ParsedEnum, ParsedField, ParsedSequence, ParsedTable } from "./types.ts";

/** A column a Firebird trigger (or similar) fills from a generator. */
export interface AutoIncrementHint {
  table: QualifiedName;
  column: string;
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

  constructor(dialect: Dialect) {
    this.dialect = dialect;
  }

  /** The lookup key of a name in this dialect. */
  key(name: string): string {
    return this.dialect === "PostgreSQL" ? name : name.toLowerCase();
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
    this.byName.set(k, [...(this.byName.get(k) ?? []), table]);
  }

  findField(table: ParsedTable, name: string): ParsedField | undefined {
    const k = this.key(name);
    return table.fields.find((f) => this.key(f.field_name) === k);
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
    const s = schema.toLowerCase();
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
