/**
 * The statements of one table in the target dialect: CREATE TABLE (columns, primary key,
 * unique keys, same-dialect checks, and foreign keys inline only in SQLite, which cannot
 * add them later), ALTER TABLE … ADD FOREIGN KEY, CREATE INDEX, and comments.
 */
import { literal } from "./names.ts";
import { typeKind } from "./typeKinds.ts";
import type { ExportWriter } from "./writer.ts";
import type { ParsedConstraint, ParsedIndex, ParsedTable, ReferentialAction } from "../types.ts";

const TEXTUAL = /^(tiny|medium|long)?(text|blob)$/i;

/** CREATE TABLE for `table` (under another name when `as` is given: SQLite's rebuild). */
export function createTable(w: ExportWriter, table: ParsedTable, as?: string): string {
  const lines = table.fields.map((f) => w.column(table, f));
  const constraints = w.ownConstraints(table);
  const pk = constraints.find((k) => k.type === "primary_key");
  const clusteredIndex = (table.indexes ?? []).some((i) => i.method === "clustered");
  const autoincrement = w.sqliteAutoincrement(table);
  if (pk && autoincrement) lines[table.fields.indexOf(autoincrement)] += ` ${constraintName(w, pk)}PRIMARY KEY AUTOINCREMENT`; // SQLite takes the keyword only there
  else if (pk) lines.push(`${constraintName(w, pk)}PRIMARY KEY${w.target === "MSSQL" && clusteredIndex ? " NONCLUSTERED" : ""} (${keyParts(w, table, pk.columns)})`);
  const seen = new Set(pk && w.target === "PostgreSQL" ? [pk.columns.join()] : []);
  for (const k of constraints.filter((c) => c.type === "unique")) {
    if (seen.has(k.columns.join())) continue; // PostgreSQL folds a key identical to another into it
    if (w.target === "PostgreSQL") seen.add(k.columns.join());
    lines.push(`${constraintName(w, k)}UNIQUE (${keyParts(w, table, k.columns)})`);
  }
  if (w.target === "MySQL") {
    // MySQL declares indexes inline, as mysqldump does; the auto-increment column must be indexed at once
    const auto = w.autoIncrement(table);
    if (auto && !startsAnyKey(table, auto.field_name)) lines.push(`KEY (${w.q(auto.field_name)})`);
    for (const index of portableIndexes(w, table)) lines.push(mysqlInlineIndex(w, table, index));
  }
  if (w.sameDialect) for (const c of table.checks ?? []) lines.push(`${c.name ? `CONSTRAINT ${w.q(w.names.take(c.name))} ` : ""}CHECK (${c.expression})`);
  for (const f of table.fields) {
    if (!w.sameDialect && f.enum_values && w.target !== "MySQL") lines.push(`CHECK (${w.q(f.field_name)} IN (${f.enum_values.map((v) => literal(w.target, v)).join(", ")}))`);
  }
  if (w.target === "SQLite") for (const k of table.constraints.filter((c) => c.type === "foreign_key")) lines.push(...foreignKeyClause(w, table, k));
  let sql = `CREATE TABLE ${as ?? w.ref(table)} (\n  ${lines.join(",\n  ")}\n)`;
  if (w.target === "PostgreSQL" && w.sameDialect && table.options?.partition_by) sql += ` PARTITION BY ${table.options.partition_by}`;
  if (w.target === "MySQL") {
    const engine = w.sameDialect ? (table.options?.engine ?? "InnoDB") : "InnoDB";
    sql += ` ENGINE=${engine}`;
    if (w.sameDialect && table.options?.charset) sql += ` DEFAULT CHARSET=${table.options.charset}`;
    if (table.comment) sql += ` COMMENT=${literal(w.target, table.comment)}`;
  }
  if (w.target === "SQLite" && w.sameDialect) {
    const options = [table.options?.without_rowid === "true" ? "WITHOUT ROWID" : null, table.options?.strict === "true" ? "STRICT" : null].filter(Boolean);
    if (options.length) sql += ` ${options.join(", ")}`;
  }
  if (w.target === "SQLite" && table.comment) sql = `-- ${table.comment.replace(/\n/g, " ")}\n${sql}`;
  return sql;
}

function startsAnyKey(table: ParsedTable, column: string): boolean {
  return table.constraints.some((k) => k.type !== "foreign_key" && k.columns[0] === column) || (table.indexes ?? []).some((i) => i.columns[0] === column);
}

function constraintName(w: ExportWriter, k: ParsedConstraint): string {
  if (!k.name || (w.target === "MySQL" && k.type === "primary_key")) return "";
  return `CONSTRAINT ${w.q(w.names.take(k.name))} `;
}

/** Key columns; MySQL keys on TEXT/BLOB columns need a prefix length. */
function keyParts(w: ExportWriter, table: ParsedTable, columns: string[]): string {
  return columns
    .map((name) => {
      const field = w.field(table, name);
      const prefix = w.target === "MySQL" && field && TEXTUAL.test(w.type(table, field)) ? "(255)" : "";
      return `${w.q(name)}${prefix}`;
    })
    .join(", ");
}

/** The referenced columns of a foreign key (its target's primary key when not written). */
function referencedColumns(w: ExportWriter, k: ParsedConstraint): string[] | null {
  if (k.references_columns?.length) return k.references_columns;
  return w.referenced(k)?.constraints.find((c) => c.type === "primary_key")?.columns ?? null;
}

function action(w: ExportWriter, a: ReferentialAction | null): ReferentialAction | null {
  if (a === "RESTRICT" && (w.target === "MSSQL" || w.target === "Firebird")) return "NO ACTION";
  if (a === "SET DEFAULT" && w.target === "MySQL") return "NO ACTION"; // InnoDB rejects SET DEFAULT
  return a;
}

/** `[CONSTRAINT n] FOREIGN KEY (…) REFERENCES t (…) [ON DELETE …] [ON UPDATE …]`, or nothing when it cannot be written. */
export function foreignKeyClause(w: ExportWriter, table: ParsedTable, k: ParsedConstraint): string[] {
  const target = w.referenced(k);
  const columns = referencedColumns(w, k);
  if (!target || !columns) {
    w.notes.push(`${table.table_name}: foreign key (${k.columns.join(", ")}) to ${k.references_table} left out: the referenced table or key is not in the schema`);
    return [];
  }
  const keyed = target.constraints.some((c) => (c.type === "primary_key" || c.type === "unique") && c.columns.join() === columns.join());
  if (!keyed && w.target !== "MySQL" && w.target !== "SQLite") {
    w.notes.push(`${table.table_name}: foreign key (${k.columns.join(", ")}) left out: ${k.references_table} (${columns.join(", ")}) is not a primary or unique key`);
    return [];
  }
  const targetRef = w.target === "SQLite" ? w.q(w.exportedName(target).name) : w.ref(target);
  let sql = `${constraintName(w, k)}FOREIGN KEY (${k.columns.map((c) => w.q(c)).join(", ")}) REFERENCES ${targetRef} (${columns.map((c) => w.q(c)).join(", ")})`;
  let onDelete = action(w, k.on_delete);
  let onUpdate = action(w, k.on_update);
  const notNull = k.columns.some((c) => w.field(table, c)?.is_nullable === false);
  if (w.target === "MySQL" && notNull) {
    // MySQL refuses SET NULL on a NOT NULL column; elsewhere such a delete fails at run time, as NO ACTION does
    if (onDelete === "SET NULL") onDelete = "NO ACTION";
    if (onUpdate === "SET NULL") onUpdate = "NO ACTION";
  }
  if (onDelete) sql += ` ON DELETE ${onDelete}`;
  if (onUpdate && !(w.target === "Firebird" && onUpdate === "NO ACTION")) sql += ` ON UPDATE ${onUpdate}`;
  return [sql];
}

/** ALTER TABLE … ADD FOREIGN KEY statements (every target but SQLite); `keys` limits them. */
export function addForeignKeys(w: ExportWriter, table: ParsedTable, keys: ParsedConstraint[] = w.ownConstraints(table)): string[] {
  return keys
    .filter((k) => k.type === "foreign_key")
    .flatMap((k) => foreignKeyClause(w, table, k))
    .map((clause) => `ALTER TABLE ${w.ref(table)} ADD ${clause}`);
}

const SPECIAL_MSSQL = new Set(["xml", "fulltext", "spatial", "columnstore"]);
/** Index kinds that mean the same in every dialect; others stay in their own. */
const PORTABLE_METHODS = new Set([null, "btree", "clustered", "nonclustered"]);
/** Column kinds the targets cannot index with a plain index. */
const UNINDEXABLE = new Set(["xml", "json", "blob", "text", "other"]);

/** `ALTER TABLE parent ATTACH PARTITION …` for a PostgreSQL partition in a same-dialect export. */
export function attachPartition(w: ExportWriter, table: ParsedTable): string[] {
  const parent = w.partitionParent(table);
  return parent ? [`ALTER TABLE ${w.ref(parent)} ATTACH PARTITION ${w.ref(table)} ${table.options!.partition_bound}`] : [];
}

/** CREATE INDEX statements (MySQL has them inline); into another dialect only plain-column indexes travel. */
export function createIndexes(w: ExportWriter, table: ParsedTable, only?: ParsedIndex[]): string[] {
  if (w.target === "MySQL" && !only) return [];
  return portableIndexes(w, table, only).map((index) => indexSql(w, table, index, index.columns.every((c) => w.field(table, c) !== undefined)));
}

function mysqlInlineIndex(w: ExportWriter, table: ParsedTable, index: ParsedIndex): string {
  const method = w.sameDialect && (index.method === "fulltext" || index.method === "spatial") ? `${index.method.toUpperCase()} ` : "";
  const name = index.name ? `${w.q(w.names.take(index.name))} ` : "";
  const parts = method ? index.columns.map((c) => w.q(c)).join(", ") : keyParts(w, table, index.columns);
  return `${method}${index.unique ? "UNIQUE " : ""}KEY ${name}(${parts})`;
}

/** The indexes the target can create. */
function portableIndexes(w: ExportWriter, table: ParsedTable, only?: ParsedIndex[]): ParsedIndex[] {
  const out: ParsedIndex[] = [];
  for (const index of only ?? table.indexes ?? []) {
    const plain = index.columns.length > 0 && index.columns.every((c) => w.field(table, c) !== undefined);
    if (!w.sameDialect) {
      if (!plain || index.where || !PORTABLE_METHODS.has(index.method ?? null)) continue;
      const kinds = index.columns.map((c) => typeKind(w.source, w.field(table, c)!).kind);
      if (w.target !== "MySQL" && kinds.some((k) => UNINDEXABLE.has(k) && !(k === "text" && w.target === "PostgreSQL"))) continue;
    }
    if (w.target === "MSSQL" && SPECIAL_MSSQL.has(index.method ?? "")) continue; // needs catalogs and XML schemas the export does not make
    if (index.columns.length === 0) continue;
    if (w.target === "MySQL" && !plain) continue; // expression parts need MySQL 8 syntax
    out.push(index);
  }
  return out;
}

function indexSql(w: ExportWriter, table: ParsedTable, index: ParsedIndex, plain: boolean): string {
  const name = w.q(w.names.take(index.name ?? `${table.table_name}_${index.columns.join("_")}_idx`.replace(/\W+/g, "_")));
  const parts = plain ? keyParts(w, table, index.columns) : index.columns.join(", ");
  const method = w.sameDialect ? index.method ?? null : null;
  const kind = w.target === "MySQL" && (method === "fulltext" || method === "spatial") ? `${method.toUpperCase()} ` : "";
  const cluster = w.target === "MSSQL" && (method === "clustered" || method === "nonclustered") ? `${method.toUpperCase()} ` : "";
  const using = w.target === "PostgreSQL" && method && method !== "btree" ? ` USING ${method}` : "";
  const where = index.where && w.sameDialect && w.target !== "MySQL" ? ` WHERE ${index.where}` : "";
  const unique = index.unique ? "UNIQUE " : "";
  const body = w.target === "Firebird" && !plain ? `COMPUTED BY (${parts})` : `(${w.target === "MySQL" && kind ? index.columns.map((c) => w.q(c)).join(", ") : parts})`;
  return `CREATE ${unique}${kind}${cluster}INDEX ${name} ON ${w.ref(table)}${using} ${body}${where}`;
}

/** Table and column comments where the target keeps them outside CREATE TABLE. */
export function comments(w: ExportWriter, table: ParsedTable): string[] {
  const out: string[] = [];
  const columnRef = (name: string) => `${w.ref(table)}.${w.q(name)}`;
  const add = (target: "TABLE" | "COLUMN", ref: string, text: string, column?: string) => {
    if (w.target === "PostgreSQL" || w.target === "Firebird") out.push(`COMMENT ON ${target} ${ref} IS ${literal(w.target, text)}`);
    if (w.target === "MSSQL") {
      const { schema, name } = w.exportedName(table);
      const level2 = column ? `, @level2type = N'COLUMN', @level2name = ${literal(w.target, column)}` : "";
      out.push(
        `EXEC sys.sp_addextendedproperty @name = N'MS_Description', @value = ${literal(w.target, text)}, @level0type = N'SCHEMA', @level0name = ${literal(w.target, schema ?? "dbo")}, @level1type = N'TABLE', @level1name = ${literal(w.target, name)}${level2}`,
      );
    }
  };
  if (table.comment) add("TABLE", w.ref(table), table.comment);
  for (const f of table.fields) if (f.comment) add("COLUMN", columnRef(f.field_name), f.comment, f.field_name);
  return out;
}
