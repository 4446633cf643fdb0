/**
 * What a re-parse of a schema took away from the forms bound to it. A project keeps its
 * forms when a new parse of their schema no longer has their table or some of their fields
 * (DESIGN §14; the bundle import keeps them too), so reads flag what is gone: a form whose
 * table is missing, and the form's fields (and with them the layout items placing them)
 * whose names its table no longer has. The same goes for the form designer's placements (a
 * field, a linked table or linked field the project's schemas no longer have) and for reports
 * (their table, and the fields their layout and pattern name).
 *
 * Glossary: a stale field is a field of a form (`project_form_fields.field_name`) that is not
 * a field of the form's table in the schema's latest parse; every field of a form whose table
 * is missing is stale. A stale reference of a placement is what of it the schemas lack.
 */
import { sql, type CommonQueryMethods } from "../db/pool.ts";
import { z } from "zod";
import { hasField, loadSchemaFields, schemaFieldsOf, schemaTableRow, schemaTablesJson, type SchemaFields } from "./schemaFields.ts";

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

/**
 * The tables a read judges placements by: none (nothing flagged) when the project has no
 * parsed schema to judge by, as for forms whose schema has no parse.
 */
export function judgedBy(tables: SchemaFields | null | undefined): SchemaFields | undefined {
  return tables && tables.size > 0 ? tables : undefined;
}

/** The schema references of a form designer placement (shared/forms/elements.ts). */
export interface PlacementReferences {
  field_name: string | null;
  link_table: string | null;
  link_field: string | null;
  link_display_field: string | null;
}

/**
 * What a placement names that `tables` no longer have: its field (`table.field` or `field`), its
 * linked table, or `table.field` of a linked field; empty when it holds, is no placement, or
 * there is nothing to judge by.
 */
export function staleReferences(p: PlacementReferences, tables: SchemaFields | undefined): string[] {
  if (!tables || p.field_name === null) return [];
  const out: string[] = [];
  if (!hasField(tables, p.field_name)) out.push(p.field_name);
  if (p.link_table !== null) {
    const linked = tables.get(p.link_table);
    if (!linked) out.push(p.link_table);
    else for (const field of [p.link_field, p.link_display_field]) if (field !== null && !linked.has(field)) out.push(`${p.link_table}.${field}`);
  }
  return out;
}

/** Whether every reference of placement `p` is in `tables` (staleReferences would be empty), without building names. */
export function placementHolds(p: PlacementReferences, tables: SchemaFields): boolean {
  if (p.field_name === null) return true;
  if (!hasField(tables, p.field_name)) return false;
  if (p.link_table === null) return true;
  const linked = tables.get(p.link_table);
  return linked !== undefined && (p.link_field === null || linked.has(p.link_field)) && (p.link_display_field === null || linked.has(p.link_display_field));
}

/**
 * The tables a form set's placements are judged by (project `projectId`'s parsed schemas, or
 * schema `schemaId` of it), read only when `elements` hold a placement.
 */
export async function placementTables(
  conn: CommonQueryMethods,
  place: { project_id: number | null; schema_id: number | null },
  elements: readonly { field_name: string | null }[],
): Promise<SchemaFields | undefined> {
  if (place.project_id === null || !elements.some((e) => e.field_name !== null)) return undefined;
  return judgedBy(await loadSchemaFields(conn, place.project_id, place.schema_id));
}
