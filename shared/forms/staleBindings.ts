/**
 * What a re-parse of a schema took away from the forms bound to it. A project keeps its
 * forms when a new parse of their schema no longer has their table or some of their fields
 * (DESIGN §14; the bundle import keeps them too), so reads flag what is gone: a form whose
 * table is missing, and the form's fields (and with them the layout items placing them)
 * whose names its table no longer has.
 *
 * Glossary: a stale field is a field of a form (`project_form_fields.field_name`) that is not
 * a field of the form's table in the schema's latest parse; every field of a form whose table
 * is missing is stale.
 */
import { sql, type CommonQueryMethods } from "../db/pool.ts";
import { z } from "zod";
import { schemaFieldsOf, schemaTableRow, schemaTablesJson, type SchemaFields } from "./schemaFields.ts";

/** The tables and fields of the project's ready schemas `schemaIds`, by schema id. */
export async function schemaFieldsById(conn: CommonQueryMethods, projectId: number, schemaIds: readonly number[]): Promise<Map<number, SchemaFields>> {
  const ids = [...new Set(schemaIds)];
  if (ids.length === 0) return new Map();
  const rows = await conn.any(sql.type(z.object({ schema_id: z.number(), tables: z.array(schemaTableRow) }))`
    select o.id as schema_id, ${schemaTablesJson(projectId, sql.fragment`o.id`)} as tables
    from schemas o where o.project_id = ${projectId} and o.status = 'ready' and o.id = any(${sql.array(ids, "int8")})`);
  return new Map(rows.map((row) => [row.schema_id, schemaFieldsOf(row.tables)]));
}

/** What of a form is stale: its table, and which of `fieldNames` its table no longer has. */
export interface StaleBinding {
  tableMissing: boolean;
  staleFields: string[];
}

/**
 * Judges a form bound to `tableName` with fields `fieldNames` against its schema's `tables`
 * (undefined when the schema has no parse to judge by: nothing is flagged).
 */
export function staleBinding(tables: SchemaFields | undefined, tableName: string, fieldNames: readonly string[]): StaleBinding {
  if (!tables) return { tableMissing: false, staleFields: [] };
  const fields = tables.get(tableName);
  if (!fields) return { tableMissing: true, staleFields: [...fieldNames] };
  return { tableMissing: false, staleFields: fieldNames.filter((name) => !fields.has(name)) };
}
