/**
 * A form element as a client writes it: the fields every kind has, and per `element_type`
 * the kind-specific fields (spec, element kinds), as one zod discriminated union. What a
 * kind does not use is dropped; what it needs is required. Checks that need the window or
 * the project's schemas (bounds, field placements) are in elementChecks.ts.
 */
import { z } from "zod";
import { hexColor } from "./colors.ts";

const px = (max = 10_000) => z.number().int().min(0).max(max);
const size = z.number().int().min(1).max(10_000);
const name = z.string().trim().min(1).max(255);
const anchor = px().nullable().default(null);

/** Fields of every element; positions are inside the window, tab order 1-based. */
const common = {
  id: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
  x_position: px().default(0),
  y_position: px().default(0),
  width: size.optional(),
  height: size.optional(),
  sort_order: z.number().int().min(0).max(1_000_000).default(0),
  is_visible: z.boolean().default(true),
  tab_order: z.number().int().min(1).max(10_000).optional(),
  background_color: hexColor.nullable().default(null),
  border_width: z.number().int().min(0).max(100).default(0),
  border_color: hexColor.nullable().default(null),
  anchor_right: anchor,
  anchor_bottom: anchor,
  anchor_width: anchor,
  anchor_height: anchor,
};

export const buttonTypes = ["button_save", "button_cancel", "button_new", "button_delete", "button_nav_first", "button_nav_prev", "button_nav_next", "button_nav_last"] as const;
export const separatorTypes = ["separator_horizontal", "separator_vertical"] as const;
export const containerTypes = ["container_simple", "container_tab", "container_grid"] as const;
export const fieldTypes = ["field_textinput", "field_textarea", "field_number", "field_date", "field_datetime", "field_checkbox", "field_dropdown"] as const;
export const elementTypes = [...containerTypes, ...buttonTypes, ...separatorTypes, ...fieldTypes] as const;
export type ElementType = (typeof elementTypes)[number];
export const controlTypes = ["text", "number", "date", "dropdown"] as const;

const containerSimple = z.object({
  ...common,
  element_type: z.literal("container_simple"),
  container_orientation: z.enum(["vertical", "horizontal"]),
  container_gap: px(1000),
  container_columns: z.number().int().min(1).max(100).nullable().default(null),
});
const containerTab = z.object({
  ...common,
  element_type: z.literal("container_tab"),
  max_fields: z.number().int().min(1).max(1000),
  default_control_height: z.number().int().min(1).max(1000),
});
const containerGrid = z.object({
  ...common,
  element_type: z.literal("container_grid"),
  container_columns: z.number().int().min(1).max(100),
  container_gap: px(1000),
  max_fields: z.number().int().min(1).max(1000),
});
const button = z.object({
  ...common,
  element_type: z.enum(buttonTypes),
  button_label: z.string().trim().min(1).max(255),
  button_icon: z.string().trim().max(100).nullable().default(null),
  button_action: z.string().trim().min(1).max(255),
  button_background_color: hexColor.nullable().default(null),
  button_text_color: hexColor.nullable().default(null),
});
const separator = z.object({ ...common, element_type: z.enum(separatorTypes) });
const fieldPlacement = z
  .object({
    ...common,
    element_type: z.enum(fieldTypes),
    field_name: name,
    control_type: z.enum(controlTypes),
    link_table: name.nullable().default(null),
    link_field: name.nullable().default(null),
    link_display_field: name.nullable().default(null),
  })
  .superRefine((value, ctx) => {
    const lookup = value.control_type === "dropdown" || value.element_type === "field_dropdown";
    for (const key of ["link_table", "link_field", "link_display_field"] as const) {
      if (lookup && !value[key]) ctx.addIssue({ code: "custom", path: [key], message: `A dropdown needs its ${key.replaceAll("_", " ")}.` });
    }
  });

export const elementInput = z.discriminatedUnion("element_type", [containerSimple, containerTab, containerGrid, button, separator, fieldPlacement]);
export type ElementInput = z.output<typeof elementInput>;

/** Columns of the kind-specific fields (null where a kind does not use them). */
export const kindColumns = [
  "container_orientation",
  "container_gap",
  "container_columns",
  "max_fields",
  "default_control_height",
  "button_label",
  "button_icon",
  "button_action",
  "button_background_color",
  "button_text_color",
  "field_name",
  "control_type",
  "link_table",
  "link_field",
  "link_display_field",
] as const;
export type KindColumn = (typeof kindColumns)[number];

/** Columns every element has, written from the input. */
export const commonColumns = [
  "element_type",
  "x_position",
  "y_position",
  "width",
  "height",
  "sort_order",
  "is_visible",
  "tab_order",
  "background_color",
  "border_width",
  "border_color",
  "anchor_right",
  "anchor_bottom",
  "anchor_width",
  "anchor_height",
] as const;

/** The size an element gets when the client sends none. */
export function defaultSize(type: ElementType): { width: number; height: number } {
  if (type === "separator_horizontal") return { width: 200, height: 2 };
  if (type === "separator_vertical") return { width: 2, height: 200 };
  if (type.startsWith("button_")) return { width: 100, height: 30 };
  if (type.startsWith("container_")) return { width: 300, height: 200 };
  return { width: 200, height: 24 };
}

/**
 * `common` without its defaults: zod fills a default in also when the key is optional (as
 * `.partial()` makes it), which turned an update of one field into a reset of the others.
 */
const commonChanges = Object.fromEntries(
  Object.entries(common).map(([key, schema]) => [key, schema instanceof z.ZodDefault ? schema.unwrap() : schema]),
) as { [K in keyof typeof common]: (typeof common)[K] extends z.ZodDefault<infer T> ? T : (typeof common)[K] };

/**
 * A partial update of an element: any of its fields, the ones not sent kept as stored; the
 * result is checked as a whole (the kind's rules over the merged element).
 */
export const elementChanges = z
  .object({
    element_type: z.enum(elementTypes),
    ...commonChanges,
    ...Object.fromEntries(kindColumns.map((column) => [column, z.union([z.string().max(255), z.number(), z.null()])])),
  })
  .omit({ id: true })
  .partial()
  .refine((v) => Object.keys(v).length > 0, { message: "Send at least one field to change." });
