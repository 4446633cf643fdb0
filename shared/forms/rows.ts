/** Rows of the form designer tables, as the routes read them. */
import { z } from "zod";
import { sql } from "../db/pool.ts";
import { windowTypes } from "./windowSizes.ts";

export const formSetRow = z.object({
  id: z.number(),
  name: z.string(),
  description: z.string().nullable(),
  creator_user_id: z.number(),
  project_id: z.number().nullable(),
  schema_id: z.number().nullable(),
  visibility: z.enum(["private", "team", "public"]),
  cloned_from_id: z.number().nullable(),
  default_background_color: z.string(),
  default_window_color: z.string(),
  default_text_color: z.string(),
  default_button_color: z.string(),
  default_button_text_color: z.string(),
  is_active: z.boolean(),
  created_at: z.date(),
  updated_at: z.date(),
});
export type FormSetRow = z.infer<typeof formSetRow>;
export const formSetColumns = sql.fragment`fs.id, fs.name, fs.description, fs.creator_user_id, fs.project_id, fs.schema_id, fs.visibility,
  fs.cloned_from_id, fs.default_background_color, fs.default_window_color, fs.default_text_color, fs.default_button_color,
  fs.default_button_text_color, fs.is_active, fs.created_at, fs.updated_at`;

export const formWindowRow = z.object({
  id: z.number(),
  form_set_id: z.number(),
  name: z.string(),
  display_name: z.string().nullable(),
  window_type: z.enum(windowTypes),
  min_width: z.number(),
  min_height: z.number(),
  default_width: z.number(),
  default_height: z.number(),
  background_color: z.string(),
  window_color: z.string(),
  text_color: z.string().nullable(),
  is_active: z.boolean(),
  sort_order: z.number(),
  version: z.number(),
  created_at: z.date(),
  updated_at: z.date(),
});
export type FormWindowRow = z.infer<typeof formWindowRow>;
export const formWindowColumns = sql.fragment`w.id, w.form_set_id, w.name, w.display_name, w.window_type, w.min_width, w.min_height,
  w.default_width, w.default_height, w.background_color, w.window_color, w.text_color, w.is_active, w.sort_order, w.version,
  w.created_at, w.updated_at`;

const n = z.number().nullable();
const s = z.string().nullable();
export const formElementRow = z.object({
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
  background_color: s,
  border_width: z.number(),
  border_color: s,
  anchor_right: n,
  anchor_bottom: n,
  anchor_width: n,
  anchor_height: n,
  container_orientation: s,
  container_gap: n,
  container_columns: n,
  max_fields: n,
  default_control_height: n,
  button_label: s,
  button_icon: s,
  button_action: s,
  button_background_color: s,
  button_text_color: s,
  field_name: s,
  control_type: s,
  link_table: s,
  link_field: s,
  link_display_field: s,
  created_at: z.date(),
  updated_at: z.date(),
});
export type FormElementRow = z.infer<typeof formElementRow>;
export const formElementColumns = sql.fragment`e.id, e.form_window_id, e.element_type, e.x_position, e.y_position, e.width, e.height,
  e.sort_order, e.is_visible, e.tab_order, e.background_color, e.border_width, e.border_color, e.anchor_right, e.anchor_bottom,
  e.anchor_width, e.anchor_height, e.container_orientation, e.container_gap, e.container_columns, e.max_fields,
  e.default_control_height, e.button_label, e.button_icon, e.button_action, e.button_background_color, e.button_text_color,
  e.field_name, e.control_type, e.link_table, e.link_field, e.link_display_field, e.created_at, e.updated_at`;
