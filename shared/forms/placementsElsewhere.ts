/**
 * Whether a form set's field placements hold in another place (another project, or another
 * schema of its project): a set that moves takes its placements along, and each must name a
 * field (and its dropdown link fields) of the new place, as it had to when it was written.
 * Otherwise every later write of such an element, and every layout write that sends it back,
 * would be refused on a field the client did not change.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";
import { hasField, loadSchemaFields, type SchemaFields } from "./schemaFields.ts";

/** Problems named per set at most; the rest are counted. */
const MAX_NAMED = 10;

const placementRow = z.object({
  window_name: z.string(),
  field_name: z.string(),
  link_table: z.string().nullable(),
  link_field: z.string().nullable(),
  link_display_field: z.string().nullable(),
});
type Placement = z.infer<typeof placementRow>;

/** What of `p` the fields `tables` lack, or null when it holds. */
function missing(p: Placement, tables: SchemaFields): string | null {
  if (!hasField(tables, p.field_name)) return p.field_name;
  if (p.link_table === null) return null;
  const linked = tables.get(p.link_table);
  if (!linked) return `${p.link_table} (its link)`;
  for (const field of [p.link_field, p.link_display_field]) if (field !== null && !linked.has(field)) return `${p.link_table}.${field} (its link)`;
  return null;
}

/**
 * The placements of set `setId` that would not hold in project `projectId` (narrowed to schema
 * `schemaId` when not null), described for a 422; empty when all hold. With no project, every
 * placement is one: a set outside a project cannot hold placements.
 */
export async function placementsNotIn(conn: CommonQueryMethods, setId: number, projectId: number | null, schemaId: number | null): Promise<string[]> {
  const placements = await conn.any(sql.type(placementRow)`
    select w.name as window_name, e.field_name, e.link_table, e.link_field, e.link_display_field
    from form_elements e join form_windows w on w.id = e.form_window_id
    where w.form_set_id = ${setId} and e.field_name is not null
    order by w.sort_order, w.id, e.tab_order, e.id`);
  if (placements.length === 0) return [];
  const tables = projectId === null ? null : await loadSchemaFields(conn, projectId, schemaId);
  const problems: string[] = [];
  for (const p of placements) {
    const what = tables === null ? p.field_name : missing(p, tables);
    if (what !== null) problems.push(`${what} in window ${p.window_name}`);
  }
  if (problems.length <= MAX_NAMED) return problems;
  return [...problems.slice(0, MAX_NAMED), `and ${problems.length - MAX_NAMED} more`];
}
