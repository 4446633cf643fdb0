/**
 * The shared state of one export into a target dialect: the name every table gets there
 * (schemas kept where the target has them, otherwise dropped, with collisions prefixed),
 * the constraint/index name allocator, and column definitions (type, auto-increment in the
 * target's own way, computed expression, default, nullability, collation, comment). What
 * the column definitions ask about a column (is it keyed, referenced, the auto-increment
 * one, which user type) is answered from maps built once per export, so an export costs
 * time linear in the schema's size however many tables and columns it has.
 */
import { MAX_NAME, NameAllocator, literal, quoteIdent } from "./names.ts";
import { renderDefault } from "./defaults.ts";
import { isIntegerKind, renderType } from "./renderType.ts";
import { typeKind } from "./typeKinds.ts";
import { SchemaIndex, isDefaultSchema } from "../schemaIndex.ts";
import type { Dialect, ParsedConstraint, ParsedDomain, ParsedEnum, ParsedField, ParsedSchema, ParsedTable } from "../types.ts";

/** Names and column definitions of one export. */
export class ExportWriter {
  readonly target: Dialect;
  readonly source: Dialect;
  readonly schema: ParsedSchema;
  readonly index: SchemaIndex;
  readonly names: NameAllocator;
  /** Lossy conversions, written as comments at the top of the export. */
  readonly notes: string[] = [];
  private readonly exported = new Map<ParsedTable, { schema: string | null; name: string }>();
  private readonly autoColumns = new Map<ParsedTable, Set<ParsedField>>();
  private readonly keyedColumns = new Map<ParsedTable, Set<string>>();
  private readonly fieldMaps = new Map<ParsedTable, Map<string, ParsedField>>();
  private readonly positions = new Map<ParsedTable, Map<ParsedField, number>>();
  private referencedColumns: Map<ParsedTable, Set<string>> | null = null;
  private userTypes: Map<string, ParsedDomain | ParsedEnum> | null = null;

  constructor(schema: ParsedSchema, target: Dialect) {
    this.target = target;
    this.source = schema.dialect;
    this.schema = schema;
    this.index = new SchemaIndex(schema);
    const keepSchemas = (target === "PostgreSQL" || target === "MSSQL") && this.source !== "MySQL" && this.source !== "SQLite";
    const taken = new Map<string, number>();
    for (const table of schema.tables) {
      const own = keepSchemas && !isDefaultSchema(table.schema_name) ? table.schema_name : null;
      const key = `${own ?? ""}.${table.table_name.toLowerCase()}`;
      taken.set(key, (taken.get(key) ?? 0) + 1);
    }
    const tableNames = new NameAllocator(target);
    for (const table of schema.tables) {
      const own = keepSchemas && !isDefaultSchema(table.schema_name) ? table.schema_name : null;
      const clash = (taken.get(`${own ?? ""}.${table.table_name.toLowerCase()}`) ?? 0) > 1;
      // without schemas, Person.Address and Sales.Address need different names
      const wanted = clash && table.schema_name ? `${table.schema_name}_${table.table_name}` : table.table_name;
      this.exported.set(table, { schema: own, name: own ? wanted.slice(0, MAX_NAME[target]) : tableNames.take(wanted) });
    }
    this.names = new NameAllocator(target, [...this.exported.values()].map((t) => t.name));
  }

  get sameDialect(): boolean {
    return this.target === this.source;
  }

  q(name: string): string {
    return quoteIdent(this.target, name);
  }

  /** Schemas the export must create (PostgreSQL, SQL Server). */
  schemas(): string[] {
    return [...new Set([...this.exported.values()].flatMap((t) => (t.schema ? [t.schema] : [])))];
  }

  /** The table's quoted, possibly qualified, name in the target. */
  ref(table: ParsedTable): string {
    const t = this.exported.get(table)!;
    return t.schema ? `${this.q(t.schema)}.${this.q(t.name)}` : this.q(t.name);
  }

  exportedName(table: ParsedTable): { schema: string | null; name: string } {
    return this.exported.get(table)!;
  }

  /** The table's column of exactly that name (the first, should the model double it). */
  field(table: ParsedTable, name: string): ParsedField | undefined {
    let byName = this.fieldMaps.get(table);
    if (!byName) {
      byName = new Map();
      for (const f of table.fields) if (!byName.has(f.field_name)) byName.set(f.field_name, f);
      this.fieldMaps.set(table, byName);
    }
    return byName.get(name);
  }

  /** The column's place in its table's column list. */
  position(table: ParsedTable, field: ParsedField): number {
    let byField = this.positions.get(table);
    if (!byField) {
      byField = new Map(table.fields.map((f, i) => [f, i]));
      this.positions.set(table, byField);
    }
    return byField.get(field) ?? -1;
  }

  /** Whether the column takes part in a key or index (the target may need a keyable type). */
  keyed(table: ParsedTable, field: ParsedField): boolean {
    let keyed = this.keyedColumns.get(table);
    if (!keyed) {
      keyed = new Set([...table.constraints, ...(table.indexes ?? [])].flatMap((k) => k.columns));
      this.keyedColumns.set(table, keyed);
    }
    return keyed.has(field.field_name) || this.referencedBy(table, field);
  }

  /** Whether a foreign key of any table points at the column. */
  private referencedBy(table: ParsedTable, field: ParsedField): boolean {
    if (!this.referencedColumns) {
      const referenced = new Map<ParsedTable, Set<string>>();
      for (const t of this.schema.tables) {
        for (const k of t.constraints) {
          const target = k.type === "foreign_key" ? this.index.referenced(k) : undefined;
          if (!target) continue;
          const columns = referenced.get(target) ?? new Set<string>();
          for (const c of k.references_columns ?? []) columns.add(c);
          referenced.set(target, columns);
        }
      }
      this.referencedColumns = referenced;
    }
    return this.referencedColumns.get(table)?.has(field.field_name) ?? false;
  }

  /** Whether the column gets the target's auto-increment (MySQL, SQL Server, SQLite allow one a table). */
  isAutoIncrement(table: ParsedTable, field: ParsedField): boolean {
    return this.autoColumnsOf(table).has(field);
  }

  /** The first auto-increment column (MySQL must index it). */
  autoIncrement(table: ParsedTable): ParsedField | null {
    return this.autoColumnsOf(table).values().next().value ?? null;
  }

  /** The table's columns that get the target's auto-increment, in column order. */
  private autoColumnsOf(table: ParsedTable): Set<ParsedField> {
    let chosen = this.autoColumns.get(table);
    if (!chosen) {
      const pk = table.constraints.find((k) => k.type === "primary_key")?.columns ?? [];
      const candidates = table.fields.filter((f) => {
        if (!f.is_auto_increment || f.computed) return false;
        if (this.sameDialect && /^(nextval\s*\(|next\s+value\s+for\s)/i.test(f.default_value ?? "")) return false; // the sequence default is kept
        if (!isIntegerKind(typeKind(this.source, f).kind)) return false;
        return this.target !== "SQLite" || (pk.length === 1 && pk[0] === f.field_name);
      });
      chosen = new Set(this.target === "PostgreSQL" || this.target === "Firebird" ? candidates : candidates.slice(0, 1));
      this.autoColumns.set(table, chosen);
    }
    return chosen;
  }

  /**
   * The column written `INTEGER PRIMARY KEY AUTOINCREMENT` in SQLite: the table's
   * auto-increment key, unless it comes from SQLite without the keyword (a plain rowid alias
   * stays one: the keyword would change what the table does). Auto-increment columns of the
   * other engines never reuse a value, which is what the keyword means.
   */
  sqliteAutoincrement(table: ParsedTable): ParsedField | null {
    if (this.target !== "SQLite" || table.options?.without_rowid === "true") return null;
    const auto = this.autoIncrement(table);
    return auto && (this.source !== "SQLite" || auto.sqlite_autoincrement === true) ? auto : null;
  }

  /** Whether the column is written as PostgreSQL serial (auto-increment there without identity). */
  serial(table: ParsedTable, field: ParsedField): boolean {
    return this.target === "PostgreSQL" && this.sameDialect && !field.identity && this.isAutoIncrement(table, field);
  }

  /** The column's type in the target (serial pseudo-types included). */
  type(table: ParsedTable, field: ParsedField): string {
    if (this.serial(table, field)) return { smallint: "smallserial", bigint: "bigserial" }[typeKind(this.source, field).kind as string] ?? "serial";
    return this.baseType(table, field);
  }

  /** The column's type in the target as ALTER COLUMN … TYPE takes it (no serial). */
  baseType(table: ParsedTable, field: ParsedField): string {
    if (this.target === "SQLite" && this.isAutoIncrement(table, field)) return "INTEGER"; // the rowid alias
    return renderType(this.target, this.source, field, { keyed: this.keyed(table, field), useTypeName: this.sameDialect && this.usesTypeName(field) });
  }

  /** Whether a same-dialect export writes the column with its domain, enum or qualified type. */
  usesTypeName(field: ParsedField): boolean {
    if (!field.type_name) return false;
    if (field.type_name.includes(".")) return true;
    return this.userTypeNamed(field.type_name) !== undefined;
  }

  /** The schema's domain, user type or enum of that name (case-insensitive; domains first). */
  private userTypeNamed(name: string): ParsedDomain | ParsedEnum | undefined {
    if (!this.userTypes) {
      this.userTypes = new Map();
      for (const d of [...(this.schema.domains ?? []), ...(this.schema.enums ?? [])]) {
        const key = d.name.toLowerCase();
        if (!this.userTypes.has(key)) this.userTypes.set(key, d);
      }
    }
    return this.userTypes.get(name.toLowerCase());
  }

  /** A column definition for CREATE TABLE / ADD COLUMN. */
  column(table: ParsedTable, field: ParsedField): string {
    const parts = [this.q(field.field_name)];
    const computed = field.computed && this.sameDialect ? field.computed : null;
    if (field.computed && !this.sameDialect) this.notes.push(`${table.table_name}.${field.field_name} is computed in the source (${field.computed}); exported as a plain column`);
    const type = field.field_type || field.type_name ? this.typeName(table, field) : this.target === "SQLite" || computed ? "" : this.typeName(table, { ...field, field_type: "text" });
    if (computed && this.target === "MSSQL") {
      // only a persisted computed column can be declared NOT NULL
      return `${parts[0]} AS (${computed})${field.computed_stored ? ` PERSISTED${field.is_nullable ? "" : " NOT NULL"}` : ""}`;
    }
    if (computed && this.target === "Firebird") return `${parts[0]}${type ? ` ${type}` : ""} COMPUTED BY (${computed})`;
    if (type) parts.push(type);
    if (this.sameDialect && field.collation) parts.push(`COLLATE ${this.target === "PostgreSQL" ? this.q(field.collation) : field.collation}`);
    if (computed) parts.push(`GENERATED ALWAYS AS (${computed}) ${field.computed_stored ? "STORED" : "VIRTUAL"}`);
    const auto = this.isAutoIncrement(table, field);
    if (auto && this.target === "PostgreSQL" && !this.serial(table, field)) parts.push(`GENERATED ${field.identity === "always" ? "ALWAYS" : "BY DEFAULT"} AS IDENTITY`);
    if (auto && this.target === "MSSQL") parts.push("IDENTITY(1,1)");
    if (auto && this.target === "Firebird") parts.push("GENERATED BY DEFAULT AS IDENTITY");
    const def = auto || computed ? { sql: null, dropped: false } : renderDefault(this.target, this.source, field);
    if (def.dropped) this.notes.push(`${table.table_name}.${field.field_name}: default ${field.default_value} has no equivalent; left out`);
    const nullable = field.is_nullable && !(auto && this.target !== "SQLite");
    if (this.target === "Firebird" && def.sql !== null) parts.push(`DEFAULT ${def.sql}`);
    if (computed && this.target === "MySQL") {
      // MariaDB takes no NULL/NOT NULL on a generated column
    } else if (!nullable) parts.push("NOT NULL");
    else if (this.target === "MySQL" || this.target === "MSSQL") parts.push("NULL");
    if (this.target !== "Firebird" && def.sql !== null) parts.push(`DEFAULT ${def.sql}`);
    if (auto && this.target === "MySQL") parts.push("AUTO_INCREMENT");
    if (this.target === "MySQL" && this.sameDialect && field.on_update) parts.push(`ON UPDATE ${field.on_update}`);
    if (this.target === "MySQL" && field.comment) parts.push(`COMMENT ${literal(this.target, field.comment)}`);
    return parts.join(" ");
  }

  private typeName(table: ParsedTable, field: ParsedField): string {
    if (this.sameDialect && this.usesTypeName(field)) return this.userType(field.type_name!, field);
    return this.type(table, field);
  }

  /** A domain/enum/user type reference, spelled as the export creates it. */
  private userType(typeName: string, field: ParsedField): string {
    const bare = typeName.includes(".") ? typeName.slice(typeName.lastIndexOf(".") + 1) : typeName;
    const own = this.userTypeNamed(bare);
    const schema = own ? own.schema_name : typeName.includes(".") ? typeName.slice(0, typeName.lastIndexOf(".")) : null;
    const name = own ? own.name : bare;
    const ref = schema && this.target !== "Firebird" ? `${this.q(schema)}.${this.q(name)}` : this.q(name);
    const size = !own && field.length !== null ? `(${field.length}${field.scale !== null ? `,${field.scale}` : ""})` : "";
    return `${ref}${size}${"[]".repeat(field.array_dimensions ?? 0)}`;
  }

  /**
   * The partitioned parent a PostgreSQL partition is attached to in a same-dialect export
   * (its inherited keys are then left to the engine, which copies them on ATTACH).
   */
  partitionParent(table: ParsedTable): ParsedTable | undefined {
    const o = table.options;
    if (this.target !== "PostgreSQL" || !this.sameDialect || !o?.partition_of || !o.partition_bound) return undefined;
    return this.index.find(o.partition_of_schema ?? null, o.partition_of);
  }

  /** The table's keys this export writes (without those the engine copies to a partition). */
  ownConstraints(table: ParsedTable): ParsedConstraint[] {
    return this.partitionParent(table) ? table.constraints.filter((k) => !k.inherited) : table.constraints;
  }

  /** The referenced table of a foreign key, if the schema has it. */
  referenced(k: ParsedConstraint): ParsedTable | undefined {
    return this.index.referenced(k);
  }
}
