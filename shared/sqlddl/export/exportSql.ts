/**
 * `exportSql` writes a ParsedSchema as DDL for any of the five dialects, in an order the
 * target runs without a foreign-key error: schemas and types, then tables (referenced
 * ones first), then indexes, then foreign keys as ALTER TABLE once every table exists
 * (SQLite, which cannot add them later, declares them inline and checks them lazily),
 * then comments. `exportJson` writes the model itself.
 */
import { literal } from "./names.ts";
import { addForeignKeys, attachPartition, comments, createIndexes, createTable } from "./tableSql.ts";
import { renderType } from "./renderType.ts";
import { ExportWriter } from "./writer.ts";
import { isDefaultSchema } from "../schemaIndex.ts";
import { parsedSchemaSchema, type Dialect, type ParsedSchema } from "../types.ts";

/** DDL that recreates `schema` in `dialect`. */
export function exportSql(schema: ParsedSchema, dialect: Dialect): string {
  const w = new ExportWriter(schema, dialect);
  const statements: string[] = [...preamble(w)];
  const order = w.index.dependencyOrder();
  for (const table of order) statements.push(createTable(w, table));
  for (const table of order) statements.push(...attachPartition(w, table));
  // a partition's own indexes first: an index made on the parent then adopts them instead of clashing
  const byPartitionFirst = [...order.filter((t) => w.partitionParent(t)), ...order.filter((t) => !w.partitionParent(t))];
  for (const table of byPartitionFirst) statements.push(...createIndexes(w, table));
  if (dialect !== "SQLite") for (const table of order) statements.push(...addForeignKeys(w, table));
  for (const table of order) statements.push(...comments(w, table));
  const header = [
    `-- ${schema.tables.length} tables, written for ${dialect}${dialect === schema.dialect ? "" : ` from a ${schema.dialect} schema`}`,
    ...[...new Set(w.notes)].map((n) => `-- note: ${n}`),
  ];
  const end = dialect === "MSSQL" ? ";\nGO\n" : ";\n";
  return `${header.join("\n")}\n\n${statements.map((s) => `${s}${end}`).join("\n")}`;
}

/** The schema model as JSON text (validated against the shape it is stored in). */
export function exportJson(schema: ParsedSchema): string {
  return JSON.stringify(parsedSchemaSchema.parse(schema), null, 2);
}

/** Schemas, and in a same-dialect export the enums, domains, user types and sequences. */
function preamble(w: ExportWriter): string[] {
  const out: string[] = [];
  for (const s of w.schemas()) {
    if (w.target === "PostgreSQL") out.push(`CREATE SCHEMA IF NOT EXISTS ${w.q(s)}`);
    else out.push(`IF SCHEMA_ID(${literal(w.target, s)}) IS NULL EXEC(${literal(w.target, `CREATE SCHEMA ${w.q(s)}`)})`);
  }
  if (!w.sameDialect) return out;
  const qualified = (schema: string | null, name: string) => (schema && w.target !== "Firebird" && !(w.target === "MSSQL" && isDefaultSchema(schema)) ? `${w.q(schema)}.${w.q(name)}` : w.q(name));
  const declared = new Set(w.schemas());
  const needSchema = (schema: string | null) => {
    if (!schema || isDefaultSchema(schema) || declared.has(schema) || w.target === "Firebird") return;
    declared.add(schema);
    if (w.target === "PostgreSQL") out.push(`CREATE SCHEMA IF NOT EXISTS ${w.q(schema)}`);
    else if (w.target === "MSSQL") out.push(`IF SCHEMA_ID(${literal(w.target, schema)}) IS NULL EXEC(${literal(w.target, `CREATE SCHEMA ${w.q(schema)}`)})`);
  };
  if (w.target === "PostgreSQL") {
    for (const e of w.schema.enums ?? []) {
      needSchema(e.schema_name);
      out.push(`CREATE TYPE ${qualified(e.schema_name, e.name)} AS ENUM (${e.values.map((v) => literal(w.target, v)).join(", ")})`);
    }
  }
  for (const d of w.schema.domains ?? []) {
    const field = { field_name: d.name, field_type: d.field_type, length: d.length, scale: d.scale, is_nullable: d.is_nullable, is_auto_increment: false, is_primary_key: false, default_value: d.default_value, comment: null };
    const base = renderType(w.target, w.source, field, { keyed: false, useTypeName: false });
    needSchema(d.schema_name);
    if (w.target === "MSSQL") out.push(`CREATE TYPE ${qualified(d.schema_name, d.name)} FROM ${base}${d.is_nullable ? " NULL" : " NOT NULL"}`);
    else if (w.target === "PostgreSQL" || w.target === "Firebird") {
      const parts = [`CREATE DOMAIN ${qualified(d.schema_name, d.name)} AS ${base}`];
      if (d.default_value !== null) parts.push(`DEFAULT ${d.default_value}`);
      if (!d.is_nullable) parts.push("NOT NULL");
      if (d.check) parts.push(`CHECK (${d.check})`);
      out.push(parts.join(" "));
    }
  }
  if (w.target === "PostgreSQL" || w.target === "MSSQL" || w.target === "Firebird") {
    for (const s of w.schema.sequences ?? []) {
      needSchema(s.schema_name);
      const options = [s.start !== null ? `START WITH ${s.start}` : "", s.increment !== null ? `INCREMENT BY ${s.increment}` : ""].filter(Boolean).join(" ");
      out.push(`CREATE SEQUENCE ${qualified(s.schema_name, s.name)}${options ? ` ${options}` : ""}`);
    }
  }
  return out;
}
