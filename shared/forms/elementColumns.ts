/**
 * The stored columns of a form element and the SQL pieces that move a batch of element
 * values through one JSON parameter (`json_to_recordset`), shared by the single-element
 * writes and the whole-layout write.
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
/** `element_type, x_position, …` */
export const columnList = sql.join(allColumns.map((c) => sql.identifier([c])), comma);
/** `element_type = x.element_type, …` for an update from the batch `x`. */
export const assignments = sql.join(allColumns.map((c) => sql.fragment`${sql.identifier([c])} = ${sql.identifier(["x", c])}`), comma);
/** Whether a stored element `e` differs from its new values `x` in any column (a row compare, NULL-safe). */
export const differs = sql.fragment`(${sql.join(allColumns.map((c) => sql.identifier(["e", c])), comma)}) is distinct from (${sql.join(allColumns.map((c) => sql.identifier(["x", c])), comma)})`;
