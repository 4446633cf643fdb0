/**
 * The stored columns of a form element and the SQL pieces that move element values through
 * one JSON parameter: a record per element (`jsonb_to_recordset`) for the single-element
 * writes, and for the whole-layout write a *batch row* per element, a JSON array of its id
 * and its values in `allColumns` order, read by position from jsonb. For 200 elements that
 * took the server 1.3-1.4 ms of CPU against 1.65-1.75 ms by key with json_to_recordset (and
 * 7 ms by position from json, which re-reads the text for each position), and the text is a
 * third shorter.
 */
import { sql } from "../db/pool.ts";
import { commonColumns, kindColumns } from "./elementInput.ts";

/** Every column a client's element sets, common and kind-specific. */
export const allColumns = [...commonColumns, ...kindColumns];
export type ElementColumn = (typeof allColumns)[number];

/** Column types for reading a batch of elements out of one JSON parameter. */
const columnTypes: Record<ElementColumn, "text" | "int" | "boolean"> = {
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

/** The record definition `x(id bigint, element_type text, …)` of a batch; a key left out of an object reads as null. */
export const recordsetColumns = sql.join(
  [sql.fragment`id bigint`, ...allColumns.map((c) => sql.fragment`${sql.identifier([c])} ${typeFragments[columnTypes[c]]}`)],
  comma,
);
/**
 * `(r->>0)::int8 as id, (r->>1)::text as element_type, …`: batch row `r` (a JSON array) as
 * columns; positions past its end read as null.
 */
export const batchRowColumns = sql.join(
  [sql.fragment`(r->>${0}::int)::int8 as id`, ...allColumns.map((c, i) => sql.fragment`(r->>${i + 1}::int)::${typeFragments[columnTypes[c]]} as ${sql.identifier([c])}`)],
  comma,
);
/** `element_type, x_position, …` */
export const columnList = sql.join(allColumns.map((c) => sql.identifier([c])), comma);
/** `element_type = x.element_type, …` for an update from the batch `x`. */
export const assignments = sql.join(allColumns.map((c) => sql.fragment`${sql.identifier([c])} = ${sql.identifier(["x", c])}`), comma);
/** Whether a stored element `e` differs from its new values `x` in any column (a row compare, NULL-safe). */
export const differs = sql.fragment`(${sql.join(allColumns.map((c) => sql.identifier(["e", c])), comma)}) is distinct from (${sql.join(allColumns.map((c) => sql.identifier(["x", c])), comma)})`;

/** An element's values by column (the form they are checked and stored in). */
type Values = Record<ElementColumn, string | number | boolean | null>;

/**
 * The batch row of element `id` (null: a new one) with `values`: the id, then the values in
 * `allColumns` order, trailing nulls left out. Written out column by column because reading
 * `values[column]` in a loop over the column names cost twice as much for a 200-element
 * layout; test/shared/forms/elementColumns.test.ts holds it to `allColumns`.
 */
export function batchRow(id: number | null, v: Values): (string | number | boolean | null)[] {
  const row = [
    id, v.element_type, v.x_position, v.y_position, v.width, v.height, v.sort_order, v.is_visible, v.tab_order, v.background_color,
    v.border_width, v.border_color, v.anchor_right, v.anchor_bottom, v.anchor_width, v.anchor_height, v.container_orientation,
    v.container_gap, v.container_columns, v.max_fields, v.default_control_height, v.button_label, v.button_icon, v.button_action,
    v.button_background_color, v.button_text_color, v.field_name, v.control_type, v.link_table, v.link_field, v.link_display_field,
  ];
  let length = row.length;
  while (length > 0 && row[length - 1] === null) length -= 1;
  row.length = length;
  return row;
}
