/**
 * Writing form elements so that every window's layout stays valid: each element inside its
 * window, field placements naming real fields of the project's schemas, positions and sizes
 * on the project's grid when snapping is on, and tab order 1…n per window (inserting shifts
 * the others, deleting closes the gap). Every write runs with the window row locked
 * (FOR UPDATE by the caller) and bumps its `version`, which layout writes compare.
 */
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods } from "../db/pool.ts";
import { invalid, type FieldErrors } from "../errors.ts";
import { allColumns, assignments, columnList, recordsetColumns, type ElementColumn } from "./elementColumns.ts";
import { defaultSize, elementInput, type ElementInput, type KindColumn } from "./elementInput.ts";
import { formElementColumns, formElementRow, type FormElementRow, type FormSetRow, type FormWindowRow } from "./rows.ts";
import { hasField, loadSchemaFields, type SchemaFields } from "./schemaFields.ts";

/** What checks of a window's elements need: the window, its set, the grid and (on first use) the schema's fields. */
export class WindowContext {
  readonly set: FormSetRow;
  readonly window: FormWindowRow;
  readonly grid: number | null;
  private fields: Promise<SchemaFields> | undefined;
  private readonly conn: CommonQueryMethods;

  /**
   * `grid`: the project's grid size when it snaps to the grid, else null; `fields`: the
   * schema's fields when the caller read them already (read on first use otherwise).
   */
  constructor(conn: CommonQueryMethods, set: FormSetRow, window: FormWindowRow, grid: number | null, fields?: SchemaFields) {
    this.conn = conn;
    this.set = set;
    this.window = window;
    this.grid = grid;
    if (fields) this.fields = Promise.resolve(fields);
  }

  schemaFields(): Promise<SchemaFields> | null {
    if (this.set.project_id === null) return null;
    this.fields ??= loadSchemaFields(this.conn, this.set.project_id, this.set.schema_id);
    return this.fields;
  }

  /** The schema references of the window's elements `ids` as stored (ids of other windows are absent). */
  async storedReferences(ids: readonly number[]): Promise<Map<number, StoredReferences>> {
    if (ids.length === 0) return new Map();
    const rows = await this.conn.any(sql.type(storedReferencesRow)`
      select id, field_name, link_table, link_field, link_display_field from form_elements
      where form_window_id = ${this.window.id} and id = any(${sql.array([...ids], "int8")})`);
    return new Map(rows.map(({ id, ...references }) => [id, references]));
  }
}

const storedReferencesRow = z.object({
  id: z.number(),
  field_name: z.string().nullable(),
  link_table: z.string().nullable(),
  link_field: z.string().nullable(),
  link_display_field: z.string().nullable(),
});

/** An element ready to store: every column of the row but its ids. */
export type ElementValues = Record<ElementColumn, string | number | boolean | null>;

/** The anchors and whether each is bounded by the window's width (else its height). */
const anchorBounds = [
  ["anchor_right", true],
  ["anchor_width", true],
  ["anchor_bottom", false],
  ["anchor_height", false],
] as const;

const snap = (value: number, grid: number, min: number) => Math.max(min, Math.round(value / grid) * grid);

/** The schema references of a field placement, as stored (see `checkElement`'s `stored`). */
export type StoredReferences = Pick<FormElementRow, "field_name" | "link_table" | "link_field" | "link_display_field">;

/** Checks one element against its window and schema and fills its defaults; problems go to `errors` under `prefix`. */
export async function prepareElement(input: ElementInput, ctx: WindowContext, tabOrder: number, errors: FieldErrors, prefix = "", stored?: StoredReferences): Promise<ElementValues> {
  return checkElement(input, ctx, "field_name" in input ? await ctx.schemaFields() : null, tabOrder, errors, prefix, stored);
}

/**
 * `prepareElement` with the schema's fields at hand (`ctx.schemaFields()`, read once for a
 * whole list; only field placements look at them), without waiting per element.
 *
 * `stored`: the element's references as stored, for an update. A re-parse of the schema may
 * have removed what a placement names; a reference the update leaves as it is (a linked
 * field also keeping its table) is kept unchecked, so moving or relabelling such a placement
 * works, while one the update sets is checked. Reads flag stale references (`stale_fields`).
 */
export function checkElement(
  input: ElementInput,
  ctx: WindowContext,
  fields: SchemaFields | null,
  tabOrder: number,
  errors: FieldErrors,
  prefix = "",
  stored?: StoredReferences,
): ElementValues {
  const at = (field: string) => `${prefix}${field}`;
  const add = (field: string, message: string) => (errors[at(field)] ??= []).push(message);
  const size = defaultSize(input.element_type);
  let { x_position: x, y_position: y } = input;
  let width = input.width ?? size.width;
  let height = input.height ?? size.height;
  if (ctx.grid !== null) {
    x = snap(x, ctx.grid, 0);
    y = snap(y, ctx.grid, 0);
    width = snap(width, ctx.grid, ctx.grid);
    height = snap(height, ctx.grid, ctx.grid);
  }
  const { default_width: W, default_height: H } = ctx.window;
  if (x + width > W) add("x_position", `The element (x ${x}, width ${width}) does not fit in its window's width of ${W}.`);
  if (y + height > H) add("y_position", `The element (y ${y}, height ${height}) does not fit in its window's height of ${H}.`);
  for (const [key, across] of anchorBounds) {
    const value = input[key];
    const limit = across ? W : H;
    if (value !== null && value > limit) add(key, `The ${key.replace("_", " ")} must lie within the window (at most ${limit}).`);
  }
  const kind = input as Partial<Record<KindColumn, string | number | null>>;
  if ("field_name" in input) {
    if (fields === null) add("field_name", "Field placements need a form set that belongs to a project (project_id).");
    else {
      const tableKept = stored !== undefined && input.link_table === stored.link_table;
      const kept = (key: keyof StoredReferences) => stored !== undefined && input[key] === stored[key] && (key === "field_name" || tableKept);
      if (!kept("field_name") && !hasField(fields, input.field_name)) add("field_name", `The field ${input.field_name} is not a field of the project's schema.`);
      if (input.link_table !== null) {
        const linked = fields.get(input.link_table);
        const linkedFields = (["link_field", "link_display_field"] as const).filter((key) => input[key] !== null && !kept(key));
        if (!linked) {
          if (!tableKept) add("link_table", `The table ${input.link_table} is not a table of the project's schema.`);
          else if (linkedFields.length) add("link_table", `The table ${input.link_table} is no longer in the project's schema (a new parse removed it), so ${linkedFields.join(" and ")} cannot be set; choose another table.`);
        } else {
          for (const key of linkedFields) if (!linked.has(input[key]!)) add(key, `The field ${input[key]} is not a field of ${input.link_table}.`);
        }
      }
    }
  }
  // Every column named once (the type holds it to the column list): built as one literal, the
  // 200 elements of a layout share one object shape and no key is looked up by name.
  const values: ElementValues = {
    element_type: input.element_type,
    x_position: x,
    y_position: y,
    width,
    height,
    sort_order: input.sort_order,
    is_visible: input.is_visible,
    tab_order: tabOrder,
    background_color: input.background_color,
    border_width: input.border_width,
    border_color: input.border_color,
    anchor_right: input.anchor_right,
    anchor_bottom: input.anchor_bottom,
    anchor_width: input.anchor_width,
    anchor_height: input.anchor_height,
    container_orientation: kind.container_orientation ?? null,
    container_gap: kind.container_gap ?? null,
    container_columns: kind.container_columns ?? null,
    max_fields: kind.max_fields ?? null,
    default_control_height: kind.default_control_height ?? null,
    button_label: kind.button_label ?? null,
    button_icon: kind.button_icon ?? null,
    button_action: kind.button_action ?? null,
    button_background_color: kind.button_background_color ?? null,
    button_text_color: kind.button_text_color ?? null,
    field_name: kind.field_name ?? null,
    control_type: kind.control_type ?? null,
    link_table: kind.link_table ?? null,
    link_field: kind.link_field ?? null,
    link_display_field: kind.link_display_field ?? null,
  };
  if (input.element_type.startsWith("button_")) {
    values.button_background_color ??= ctx.set.default_button_color;
    values.button_text_color ??= ctx.set.default_button_text_color;
  }
  return values;
}

/** Elements of a window in tab order. */
export async function windowElements(conn: CommonQueryMethods, windowIds: readonly number[]): Promise<readonly FormElementRow[]> {
  if (windowIds.length === 0) return [];
  return conn.any(sql.type(formElementRow)`
    select ${formElementColumns} from form_elements e where e.form_window_id = any(${sql.array([...windowIds], "int8")})
    order by e.form_window_id, e.tab_order`);
}

async function count(conn: CommonQueryMethods, windowId: number): Promise<number> {
  return conn.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from form_elements where form_window_id = ${windowId}`);
}

export async function bumpVersion(conn: CommonQueryMethods, windowId: number): Promise<void> {
  await conn.query(sql.type(ignoredRow)`update form_windows set version = version + 1, updated_at = now() where id = ${windowId}`);
}

/** Inserts one element at its tab order (default last), shifting the ones at or after it. The window must be locked. */
export async function insertElement(tx: CommonQueryMethods, ctx: WindowContext, input: ElementInput): Promise<number> {
  const n = await count(tx, ctx.window.id);
  const tabOrder = Math.min(input.tab_order ?? n + 1, n + 1);
  const errors: FieldErrors = {};
  const values = await prepareElement(input, ctx, tabOrder, errors);
  if (Object.keys(errors).length) throw invalid(errors);
  await tx.query(sql.type(ignoredRow)`update form_elements set tab_order = tab_order + 1 where form_window_id = ${ctx.window.id} and tab_order >= ${tabOrder}`);
  const id = await tx.oneFirst(sql.type(z.object({ id: z.number() }))`
    insert into form_elements (form_window_id, ${columnList})
    select ${ctx.window.id}, ${columnList} from jsonb_to_recordset(${sql.jsonb([values] as never)}) as x(${recordsetColumns})
    returning id`);
  await bumpVersion(tx, ctx.window.id);
  return id;
}

/** The stored element as input again (for a partial update merged over it). */
export function elementAsInput(row: FormElementRow): Record<string, unknown> {
  const out: Record<string, unknown> = { id: row.id };
  for (const column of allColumns) if (row[column] !== null) out[column] = row[column];
  for (const key of ["background_color", "border_color", "anchor_right", "anchor_bottom", "anchor_width", "anchor_height"] as const) out[key] = row[key];
  return out;
}

/** Updates one element with `changes` merged over it; a new tab order moves it and shifts those between. */
export async function updateElement(tx: CommonQueryMethods, ctx: WindowContext, row: FormElementRow, changes: Record<string, unknown>): Promise<void> {
  const merged = elementInput.safeParse({ ...elementAsInput(row), ...changes });
  if (!merged.success) throw invalid(issuesToErrors(merged.error));
  const n = await count(tx, ctx.window.id);
  const from = row.tab_order;
  const to = Math.min(Math.max(merged.data.tab_order ?? from, 1), n);
  const errors: FieldErrors = {};
  const values = await prepareElement(merged.data, ctx, to, errors, "", row);
  if (Object.keys(errors).length) throw invalid(errors);
  if (to < from) {
    await tx.query(sql.type(ignoredRow)`update form_elements set tab_order = tab_order + 1
      where form_window_id = ${ctx.window.id} and tab_order >= ${to} and tab_order < ${from}`);
  } else if (to > from) {
    await tx.query(sql.type(ignoredRow)`update form_elements set tab_order = tab_order - 1
      where form_window_id = ${ctx.window.id} and tab_order > ${from} and tab_order <= ${to}`);
  }
  await tx.query(sql.type(ignoredRow)`
    update form_elements e set ${assignments}, updated_at = now()
    from jsonb_to_recordset(${sql.jsonb([{ ...values, id: row.id }] as never)}) as x(${recordsetColumns}) where e.id = x.id`);
  await bumpVersion(tx, ctx.window.id);
}

/** Deletes one element and closes the gap in the tab order. */
export async function deleteElement(tx: CommonQueryMethods, row: FormElementRow): Promise<void> {
  await tx.query(sql.type(ignoredRow)`delete from form_elements where id = ${row.id}`);
  await tx.query(sql.type(ignoredRow)`update form_elements set tab_order = tab_order - 1 where form_window_id = ${row.form_window_id} and tab_order > ${row.tab_order}`);
  await bumpVersion(tx, row.form_window_id);
}

/** zod issues as the field map of a 422. */
export function issuesToErrors(error: z.ZodError, prefix = ""): FieldErrors {
  const errors: FieldErrors = {};
  for (const issue of error.issues) (errors[`${prefix}${issue.path.join(".")}`] ??= []).push(issue.message);
  return errors;
}
