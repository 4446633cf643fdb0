/**
 * Writing form elements so that every window's layout stays valid: each element inside its
 * window, field placements naming real fields of the project's schemas, positions and sizes
 * on the project's grid when snapping is on, and tab order 1…n per window (inserting shifts
 * the others, deleting closes the gap). Every write runs with the window row locked
 * (FOR UPDATE by the caller) and bumps its `version`, which layout writes compare.
 */
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods } from "../db/pool.ts";
import { conflict, invalid, type FieldErrors } from "../errors.ts";
import { commonColumns, defaultSize, elementInput, kindColumns, type ElementInput } from "./elementInput.ts";
import { formElementColumns, formElementRow, type FormElementRow, type FormSetRow, type FormWindowRow } from "./rows.ts";
import { hasField, loadSchemaFields, type SchemaFields } from "./schemaFields.ts";

/** What checks of a window's elements need: the window, its set, the grid and (on first use) the schema's fields. */
export class WindowContext {
  readonly set: FormSetRow;
  readonly window: FormWindowRow;
  readonly grid: number | null;
  private fields: Promise<SchemaFields> | undefined;
  private readonly conn: CommonQueryMethods;

  /** `grid`: the project's grid size when it snaps to the grid, else null. */
  constructor(conn: CommonQueryMethods, set: FormSetRow, window: FormWindowRow, grid: number | null) {
    this.conn = conn;
    this.set = set;
    this.window = window;
    this.grid = grid;
  }

  schemaFields(): Promise<SchemaFields> | null {
    if (this.set.project_id === null) return null;
    this.fields ??= loadSchemaFields(this.conn, this.set.project_id, this.set.schema_id);
    return this.fields;
  }
}

/** An element ready to store: every column of the row but its ids. */
export type ElementValues = Record<(typeof commonColumns)[number] | (typeof kindColumns)[number], string | number | boolean | null>;

const snap = (value: number, grid: number, min: number) => Math.max(min, Math.round(value / grid) * grid);

/** Checks one element against its window and schema and fills its defaults; problems go to `errors` under `prefix`. */
export async function prepareElement(input: ElementInput, ctx: WindowContext, tabOrder: number, errors: FieldErrors, prefix = ""): Promise<ElementValues> {
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
  for (const [key, limit] of [["anchor_right", W], ["anchor_width", W], ["anchor_bottom", H], ["anchor_height", H]] as const) {
    const value = input[key];
    if (value !== null && value > limit) add(key, `The ${key.replace("_", " ")} must lie within the window (at most ${limit}).`);
  }
  const kind = input as Partial<Record<(typeof kindColumns)[number], string | number | null>>;
  if ("field_name" in input) {
    const fields = await ctx.schemaFields();
    if (fields === null) add("field_name", "Field placements need a form set that belongs to a project (project_id).");
    else {
      if (!hasField(fields, input.field_name)) add("field_name", `The field ${input.field_name} is not a field of the project's schema.`);
      if (input.link_table !== null) {
        const linked = fields.get(input.link_table);
        if (!linked) add("link_table", `The table ${input.link_table} is not a table of the project's schema.`);
        else {
          if (input.link_field !== null && !linked.has(input.link_field)) add("link_field", `The field ${input.link_field} is not a field of ${input.link_table}.`);
          if (input.link_display_field !== null && !linked.has(input.link_display_field)) {
            add("link_display_field", `The field ${input.link_display_field} is not a field of ${input.link_table}.`);
          }
        }
      }
    }
  }
  const values = {
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
  } as ElementValues;
  for (const column of kindColumns) values[column] = kind[column] ?? null;
  if (input.element_type.startsWith("button_")) {
    values.button_background_color ??= ctx.set.default_button_color;
    values.button_text_color ??= ctx.set.default_button_text_color;
  }
  return values;
}

const allColumns = [...commonColumns, ...kindColumns];

/** Column types for reading a batch of elements out of one JSON parameter. */
const columnTypes: Record<(typeof allColumns)[number], "text" | "int" | "boolean"> = {
  element_type: "text",
  x_position: "int",
  y_position: "int",
  width: "int",
  height: "int",
  sort_order: "int",
  is_visible: "boolean",
  tab_order: "int",
  background_color: "text",
  border_width: "int",
  border_color: "text",
  anchor_right: "int",
  anchor_bottom: "int",
  anchor_width: "int",
  anchor_height: "int",
  container_orientation: "text",
  container_gap: "int",
  container_columns: "int",
  max_fields: "int",
  default_control_height: "int",
  button_label: "text",
  button_icon: "text",
  button_action: "text",
  button_background_color: "text",
  button_text_color: "text",
  field_name: "text",
  control_type: "text",
  link_table: "text",
  link_field: "text",
  link_display_field: "text",
};
const typeFragments = { text: sql.fragment`text`, int: sql.fragment`int`, boolean: sql.fragment`boolean` };
const comma = sql.fragment`, `;
const recordsetColumns = sql.join(
  [sql.fragment`id bigint`, ...allColumns.map((c) => sql.fragment`${sql.identifier([c])} ${typeFragments[columnTypes[c]]}`)],
  comma,
);
const columnList = sql.join(allColumns.map((c) => sql.identifier([c])), comma);
const assignments = sql.join(allColumns.map((c) => sql.fragment`${sql.identifier([c])} = ${sql.identifier(["x", c])}`), comma);
/** Whether a stored element `e` differs from its new values `x` in any column (a row compare, NULL-safe). */
const differs = sql.fragment`(${sql.join(allColumns.map((c) => sql.identifier(["e", c])), comma)}) is distinct from (${sql.join(allColumns.map((c) => sql.identifier(["x", c])), comma)})`;

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
  const values = await prepareElement(merged.data, ctx, to, errors);
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

/**
 * Replaces a window's elements with `elements` (an element with `id` is updated, one without
 * is created, one left out is deleted), all checked before anything is written. Tab order
 * follows the `tab_order` the elements carry (distinct), then their order in the list, as
 * 1…n. @throws 409 `version_conflict` when the window changed since `version`, 422
 */
export async function writeLayout(
  tx: CommonQueryMethods,
  ctx: WindowContext,
  version: number,
  elements: readonly ElementInput[],
): Promise<{ version: number; updated_at: Date; elements: FormElementRow[] }> {
  if (ctx.window.version !== version) {
    throw conflict(`The window changed since version ${version} (it is at version ${ctx.window.version}); read it again and re-apply the change.`, "version_conflict");
  }
  const errors: FieldErrors = {};
  const seenIds = new Map<number, number>();
  const seenTabs = new Map<number, number>();
  for (const [index, element] of elements.entries()) {
    if (element.id !== undefined) {
      if (seenIds.has(element.id)) (errors[`elements.${index}.id`] ??= []).push(`Element ${element.id} is listed twice.`);
      else seenIds.set(element.id, index);
    }
    if (element.tab_order !== undefined) {
      if (seenTabs.has(element.tab_order)) (errors[`elements.${index}.tab_order`] ??= []).push(`Tab order ${element.tab_order} is also given to element ${seenTabs.get(element.tab_order)! + 1}.`);
      seenTabs.set(element.tab_order, index);
    }
  }
  const order = elements.map((_, index) => index).sort((a, b) => (elements[a]!.tab_order ?? Infinity) - (elements[b]!.tab_order ?? Infinity) || a - b);
  const tabOf = new Map(order.map((index, position) => [index, position + 1]));
  const updates: (ElementValues & { id: number })[] = [];
  const inserts: ElementValues[] = [];
  for (const [index, element] of elements.entries()) {
    const values = await prepareElement(element, ctx, tabOf.get(index)!, errors, `elements.${index}.`);
    if (element.id !== undefined) updates.push({ ...values, id: element.id });
    else inserts.push(values);
  }
  if (Object.keys(errors).length) throw invalid(errors);
  // One statement: delete what is left out, update what is named and differs from the stored
  // row (a drag moves a few elements; the others are not rewritten), insert what is new, bump
  // the version. The elements named but unchanged are read from the statement's snapshot.
  const windowId = ctx.window.id;
  const named = sql.array([...seenIds.keys()], "int8");
  const rows = await tx.any(sql.type(formElementRow.extend({ window_version: z.number(), window_updated_at: z.date(), updated: z.boolean() }))`
    with removed as (
      delete from form_elements where form_window_id = ${windowId} and not (id = any(${named})) returning id
    ), changed as (
      update form_elements e set ${assignments}, updated_at = now()
      from jsonb_to_recordset(${sql.jsonb(updates as never)}) as x(${recordsetColumns})
      where e.id = x.id and e.form_window_id = ${windowId} and ${differs}
      returning e.*
    ), kept as (
      select e.* from form_elements e
      where e.form_window_id = ${windowId} and e.id = any(${named}) and not exists (select 1 from changed c where c.id = e.id)
    ), added as (
      insert into form_elements (form_window_id, ${columnList})
      select ${windowId}, ${columnList} from jsonb_to_recordset(${sql.jsonb(inserts as never)}) as x(${recordsetColumns})
      returning *
    ), bumped as (
      update form_windows set version = version + 1, updated_at = now() where id = ${windowId} returning version, updated_at
    )
    select ${formElementColumns}, b.version as window_version, b.updated_at as window_updated_at, e.updated
    from (select *, true as updated from changed union all select *, true from kept union all select *, false from added) e cross join bumped b
    order by e.tab_order`);
  const updatedIds = new Set(rows.filter((r) => r.updated).map((r) => r.id));
  for (const [id, index] of seenIds) {
    if (!updatedIds.has(id)) (errors[`elements.${index}.id`] ??= []).push(`Element ${id} is not an element of this window.`);
  }
  // Throwing rolls the statement back with the transaction: nothing is written.
  if (Object.keys(errors).length) throw invalid(errors);
  const after =
    rows[0] ??
    (await tx.one(sql.type(z.object({ window_version: z.number(), window_updated_at: z.date() }))`
      select version as window_version, updated_at as window_updated_at from form_windows where id = ${windowId}`));
  return {
    version: after.window_version,
    updated_at: after.window_updated_at,
    elements: rows.map(({ window_version: _v, window_updated_at: _u, updated: _d, ...row }) => row),
  };
}
