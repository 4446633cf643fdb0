/**
 * Form designer resources (spec "Form designer resources"): form set, window (with its
 * `version` for layout writes), element with its kind-specific fields. An element shows
 * the fields of its kind; every element shows the common fields and the anchors.
 */
import { z } from "zod";
import { kindColumns } from "../../shared/forms/elementInput.ts";
import { formSetRow, formWindowRow, type FormElementRow, type FormSetRow, type FormWindowRow } from "../../shared/forms/rows.ts";
import type { SchemaFields } from "../../shared/forms/schemaFields.ts";
import { placementHolds, staleReferences } from "../../shared/forms/staleBindings.ts";

const nullableNumber = z.number().nullable();
export const formElementResource = z
  .object({
    id: z.number(),
    form_window_id: z.number(),
    element_type: z.string(),
    x_position: z.number(),
    y_position: z.number(),
    width: z.number(),
    height: z.number(),
    sort_order: z.number(),
    is_visible: z.boolean(),
    tab_order: z.number(),
    background_color: z.string().nullable(),
    border_width: z.number(),
    border_color: z.string().nullable(),
    anchor_right: nullableNumber,
    anchor_bottom: nullableNumber,
    anchor_width: nullableNumber,
    anchor_height: nullableNumber,
    created_at: z.string(),
    updated_at: z.string(),
    /** Field placements only: a re-parse of the schema removed their field, linked table or linked field. */
    missing: z.boolean().optional(),
  })
  .extend(Object.fromEntries(kindColumns.map((c) => [c, z.union([z.string(), z.number()]).optional()])) as Record<(typeof kindColumns)[number], z.ZodOptional<z.ZodUnion<[z.ZodString, z.ZodNumber]>>>);
export type FormElementResource = z.infer<typeof formElementResource>;

/** A date as an answer gives it (ISO 8601 in UTC). */
type IsoDate = (date: Date) => string;
const toIso: IsoDate = (date) => date.toISOString();

/**
 * `toIso` remembering each instant it wrote: the elements of a layout share a few instants
 * (the write's `now()`, the insert that created them), and `toISOString` cost ~1.5 µs a call,
 * 0.5 ms for the 400 dates of a 200-element answer.
 */
function isoMemo(): IsoDate {
  const written = new Map<number, string>();
  return (date) => {
    const ms = date.getTime();
    let iso = written.get(ms);
    if (iso === undefined) {
      iso = date.toISOString();
      written.set(ms, iso);
    }
    return iso;
  };
}

/**
 * An element as answered: the common fields, the kind-specific fields that are set, the dates.
 * Built field by field rather than copied and pruned: a layout answers hundreds of elements,
 * and objects with deleted keys are slow to build and to serialize. A field placement says
 * whether it is `missing` from `tables`, the schema's latest parse (nothing is when undefined:
 * shared/forms/staleBindings.ts), and its stale references go to `stale` when given.
 */
export function presentElement(row: FormElementRow, iso: IsoDate = toIso, tables?: SchemaFields, stale?: Set<string>): FormElementResource {
  const out: Record<string, unknown> = {
    id: row.id,
    form_window_id: row.form_window_id,
    element_type: row.element_type,
    x_position: row.x_position,
    y_position: row.y_position,
    width: row.width,
    height: row.height,
    sort_order: row.sort_order,
    is_visible: row.is_visible,
    tab_order: row.tab_order,
    background_color: row.background_color,
    border_width: row.border_width,
    border_color: row.border_color,
    anchor_right: row.anchor_right,
    anchor_bottom: row.anchor_bottom,
    anchor_width: row.anchor_width,
    anchor_height: row.anchor_height,
  };
  for (const column of kindColumns) if (row[column] !== null) out[column] = row[column];
  out.created_at = iso(row.created_at);
  out.updated_at = iso(row.updated_at);
  if (row.field_name !== null) {
    // Most placements hold: the names are built only for one that does not.
    out.missing = tables !== undefined && !placementHolds(row, tables);
    if (out.missing && stale) for (const name of staleReferences(row, tables)) stale.add(name);
  }
  return out as FormElementResource;
}

/** A window as answered: its row with ISO dates, and its elements when asked for. */
export const formWindowResource = formWindowRow.extend({
  elements_count: z.number().optional(),
  elements: z.array(formElementResource).optional(),
  /** With the elements: what its placements name that a re-parse of the schema removed (fields, linked tables, `table.field`). */
  stale_fields: z.array(z.string()).optional(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type FormWindowResource = z.infer<typeof formWindowResource>;

/** Elements as answered, together (they share dates: `isoMemo`); their stale references go to `stale`. */
function presentElements(rows: readonly FormElementRow[], tables: SchemaFields | undefined, stale: Set<string>): FormElementResource[] {
  const iso = isoMemo();
  return rows.map((row) => presentElement(row, iso, tables, stale));
}

/** A window; with its `elements`, judged against `tables` (see presentElement). */
export function presentWindow(row: FormWindowRow, elements?: readonly FormElementRow[], tables?: SchemaFields): FormWindowResource {
  const stale = new Set<string>();
  return {
    ...row,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    ...(elements ? { elements_count: elements.length, elements: presentElements(elements, tables, stale), stale_fields: [...stale] } : {}),
  };
}

/** A form set as answered: its row with ISO dates, whether it is the caller's, and its windows when asked for. */
export const formSetResource = formSetRow.extend({
  is_own: z.boolean(),
  windows_count: z.number().optional(),
  windows: z.array(formWindowResource).optional(),
  /** With the windows: what their placements name that a re-parse of the schema removed. */
  stale_fields: z.array(z.string()).optional(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type FormSetResource = z.infer<typeof formSetResource>;

export function presentFormSet(row: FormSetRow, userId: number, extra: { windowsCount?: number; windows?: FormWindowResource[] } = {}): FormSetResource {
  return {
    ...row,
    is_own: row.creator_user_id === userId,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    ...(extra.windows ? { windows: extra.windows, windows_count: extra.windows.length, stale_fields: [...new Set(extra.windows.flatMap((w) => w.stale_fields ?? []))] } : {}),
    ...(extra.windowsCount !== undefined ? { windows_count: extra.windowsCount } : {}),
  };
}
