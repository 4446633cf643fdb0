/**
 * The tables and fields a form set's placements may name: those of its schema
 * (`schema_id`), or of every parsed schema of its project. Read from the parsed schema
 * (DESIGN §9), so a placement names what templates will see.
 */
import { z } from "zod";
import type { FragmentSqlToken } from "slonik";
import { sql, type CommonQueryMethods } from "../db/pool.ts";

/** Table name (plain, and qualified when the parse has a schema name) → its field names. */
export type SchemaFields = Map<string, Set<string>>;

export const schemaTableRow = z.object({ table_name: z.string(), schema_name: z.string().nullable(), fields: z.array(z.string()) });
export type SchemaTableRow = z.infer<typeof schemaTableRow>;

/**
 * SQL: the ready schemas' tables of project `projectId` (of schema `schemaId` when that is
 * not null) as a JSON array of `schemaTableRow`; both may be SQL expressions of the caller's query.
 */
export function schemaTablesJson(projectId: FragmentSqlToken | number, schemaId: FragmentSqlToken | number | null): FragmentSqlToken {
  return sql.fragment`(select coalesce(json_agg(json_build_object('table_name', t->>'table_name', 'schema_name', t->>'schema_name',
      'fields', coalesce((select json_agg(f->>'field_name') from jsonb_array_elements(t->'fields') f), '[]'))), '[]')
    from schemas s, jsonb_array_elements(s.parsed->'tables') t
    where s.project_id = ${projectId} and s.status = 'ready' and s.parsed is not null
      and (${schemaId}::int8 is null or s.id = ${schemaId}))`;
}

/** The field map of the tables `rows`. */
export function schemaFieldsOf(rows: readonly SchemaTableRow[]): SchemaFields {
  const tables: SchemaFields = new Map();
  for (const row of rows) {
    const names = [row.table_name, ...(row.schema_name ? [`${row.schema_name}.${row.table_name}`] : [])];
    for (const name of names) {
      const fields = tables.get(name) ?? new Set<string>();
      for (const f of row.fields) fields.add(f);
      tables.set(name, fields);
    }
  }
  return tables;
}

export async function loadSchemaFields(conn: CommonQueryMethods, projectId: number, schemaId: number | null): Promise<SchemaFields> {
  const rows = await conn.oneFirst(sql.type(z.object({ tables: z.array(schemaTableRow) }))`select ${schemaTablesJson(projectId, schemaId)} as tables`);
  return schemaFieldsOf(rows);
}

/** Whether `fieldName` names a field of `tables`: `table.field` of that table, `field` of any table. */
export function hasField(tables: SchemaFields, fieldName: string): boolean {
  const dot = fieldName.lastIndexOf(".");
  if (dot > 0) return tables.get(fieldName.slice(0, dot))?.has(fieldName.slice(dot + 1)) ?? false;
  for (const fields of tables.values()) if (fields.has(fieldName)) return true;
  return false;
}
