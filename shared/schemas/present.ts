/**
 * The Schema resource of the spec ("Schema, table and field"; DESIGN §9): lists carry
 * id, name, database_type, tables_count, created_at; a single read adds the tables with
 * their fields and constraints, each table and field with its stable id.
 */
import { z } from "zod";
import { parsedConstraintSchema, parsedFieldSchema, parsedTableSchema, type ParsedSchema } from "../sqlddl/index.ts";
import { fieldKey, parseWarningSchema, qualifiedName, type Anchors, type SchemaRow } from "./store.ts";

export const fieldResource = parsedFieldSchema.extend({ id: z.number().nullable() });
export const tableResource = parsedTableSchema.extend({
  id: z.number().nullable(),
  fields: z.array(fieldResource),
  constraints: z.array(parsedConstraintSchema),
});
export type TableResource = z.infer<typeof tableResource>;

export const schemaSummary = z.object({
  id: z.number(),
  name: z.string(),
  database_type: z.string(),
  tables_count: z.number(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const schemaResource = schemaSummary.extend({
  project_id: z.number(),
  sql_text: z.string(),
  tables: z.array(tableResource),
  warnings: z.array(parseWarningSchema),
});

/** The list form of a schema. */
export function presentSchemaSummary(row: Pick<SchemaRow, "id" | "name" | "database_type" | "tables_count" | "created_at" | "updated_at">) {
  return {
    id: row.id,
    name: row.name,
    database_type: row.database_type,
    tables_count: row.tables_count,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** Tables of a parse with their anchor ids (null where a table or field has none, e.g. a stand-alone parse). */
export function presentTables(parsed: ParsedSchema, anchors: Anchors | null): TableResource[] {
  return parsed.tables.map((table) => {
    const tableId = anchors?.tables.get(qualifiedName(table)) ?? null;
    return {
      id: tableId,
      ...table,
      fields: table.fields.map((field) => ({ id: tableId === null ? null : (anchors?.fields.get(fieldKey(tableId, field.field_name)) ?? null), ...field })),
    };
  });
}

/** The single-read form of a ready schema. */
export function presentSchema(row: SchemaRow & { parsed: ParsedSchema }, anchors: Anchors) {
  return {
    ...presentSchemaSummary(row),
    project_id: row.project_id,
    sql_text: row.sql_text,
    tables: presentTables(row.parsed, anchors),
    warnings: row.warnings,
  };
}
