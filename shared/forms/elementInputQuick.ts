/**
 * A hand-written reading of a form element (`elementInput`) for the common case, so that a
 * layout write of hundreds of elements does not pay zod's discriminated union for each: it
 * returns exactly what `elementInput` would parse the value to (defaults filled, strings
 * trimmed, unknown keys dropped), or undefined when anything is off, and then zod reads the
 * value and words the 422. It accepts nothing that `elementInput` refuses;
 * test/shared/forms/elementInputQuick.test.ts compares the two over generated elements.
 * A field that zod reads for the element's kind but this reading did not take (one added to
 * `elementInput` and not here) sends the element to zod rather than being dropped: the kinds'
 * fields come from zod's own shapes.
 */
import { hexColorPattern } from "./colors.ts";
import { buttonTypes, controlTypes, elementInput, elementTypes, fieldTypes, separatorTypes, type ElementInput } from "./elementInput.ts";

type Json = Record<string, unknown>;

const isInt = (v: unknown, min: number, max: number): v is number => typeof v === "number" && Number.isInteger(v) && v >= min && v <= max;
const isIntOrNull = (v: unknown, min: number, max: number) => v === null || isInt(v, min, max);
const isColorOrNull = (v: unknown) => v === null || (typeof v === "string" && hexColorPattern.test(v));
/** `v` trimmed when it is a string of `min`…`max` characters after trimming, else undefined. */
const trimmed = (v: unknown, min: number, max: number): string | undefined => {
  if (typeof v !== "string") return undefined;
  const text = v.trim();
  return text.length >= min && text.length <= max ? text : undefined;
};

/** The fields every element has, in elementInput's order, or undefined. */
function common(e: Json): Json | undefined {
  const { id, x_position = 0, y_position = 0, width, height, sort_order = 0, is_visible = true, tab_order } = e;
  const { background_color = null, border_width = 0, border_color = null, anchor_right = null, anchor_bottom = null, anchor_width = null, anchor_height = null } = e;
  if (id !== undefined && !(Number.isSafeInteger(id) && (id as number) > 0)) return undefined;
  if (!isInt(x_position, 0, 10_000) || !isInt(y_position, 0, 10_000) || !isInt(sort_order, 0, 1_000_000) || !isInt(border_width, 0, 100)) return undefined;
  if ((width !== undefined && !isInt(width, 1, 10_000)) || (height !== undefined && !isInt(height, 1, 10_000))) return undefined;
  if (typeof is_visible !== "boolean" || (tab_order !== undefined && !isInt(tab_order, 1, 10_000))) return undefined;
  if (!isColorOrNull(background_color) || !isColorOrNull(border_color)) return undefined;
  for (const anchor of [anchor_right, anchor_bottom, anchor_width, anchor_height]) if (!isIntOrNull(anchor, 0, 10_000)) return undefined;
  const out: Json = {};
  if (id !== undefined) out.id = id;
  out.x_position = x_position;
  out.y_position = y_position;
  if (width !== undefined) out.width = width;
  if (height !== undefined) out.height = height;
  out.sort_order = sort_order;
  out.is_visible = is_visible;
  if (tab_order !== undefined) out.tab_order = tab_order;
  out.background_color = background_color;
  out.border_width = border_width;
  out.border_color = border_color;
  out.anchor_right = anchor_right;
  out.anchor_bottom = anchor_bottom;
  out.anchor_width = anchor_width;
  out.anchor_height = anchor_height;
  return out;
}

/** Adds the kind's fields of `e` to `out`; false when one is off. */
type KindReader = (e: Json, out: Json) => boolean;

const button: KindReader = (e, out) => {
  const label = trimmed(e.button_label, 1, 255);
  const action = trimmed(e.button_action, 1, 255);
  const icon = e.button_icon === undefined || e.button_icon === null ? null : trimmed(e.button_icon, 0, 100);
  const { button_background_color: background = null, button_text_color: text = null } = e;
  if (label === undefined || action === undefined || icon === undefined || !isColorOrNull(background) || !isColorOrNull(text)) return false;
  out.button_label = label;
  out.button_icon = icon;
  out.button_action = action;
  out.button_background_color = background;
  out.button_text_color = text;
  return true;
};

const nameOrNull = (v: unknown): string | null | undefined => (v === undefined || v === null ? null : trimmed(v, 1, 255));

const fieldPlacement: KindReader = (e, out) => {
  const fieldName = trimmed(e.field_name, 1, 255);
  const control = e.control_type;
  const links = [nameOrNull(e.link_table), nameOrNull(e.link_field), nameOrNull(e.link_display_field)];
  if (fieldName === undefined || !(controlTypes as readonly unknown[]).includes(control) || links.includes(undefined)) return false;
  // A dropdown names its link table and fields (elementInput's refinement words what is missing).
  if ((control === "dropdown" || out.element_type === "field_dropdown") && links.includes(null)) return false;
  out.field_name = fieldName;
  out.control_type = control;
  [out.link_table, out.link_field, out.link_display_field] = links;
  return true;
};

const containerSimple: KindReader = (e, out) => {
  const { container_orientation: orientation, container_gap: gap, container_columns: columns = null } = e;
  if ((orientation !== "vertical" && orientation !== "horizontal") || !isInt(gap, 0, 1000) || !isIntOrNull(columns, 1, 100)) return false;
  out.container_orientation = orientation;
  out.container_gap = gap;
  out.container_columns = columns;
  return true;
};

const containerTab: KindReader = (e, out) => {
  const { max_fields: maxFields, default_control_height: controlHeight } = e;
  if (!isInt(maxFields, 1, 1000) || !isInt(controlHeight, 1, 1000)) return false;
  out.max_fields = maxFields;
  out.default_control_height = controlHeight;
  return true;
};

const containerGrid: KindReader = (e, out) => {
  const { container_columns: columns, container_gap: gap, max_fields: maxFields } = e;
  if (!isInt(columns, 1, 100) || !isInt(gap, 0, 1000) || !isInt(maxFields, 1, 1000)) return false;
  out.container_columns = columns;
  out.container_gap = gap;
  out.max_fields = maxFields;
  return true;
};

const kinds = new Map<unknown, KindReader>([
  ["container_simple", containerSimple],
  ["container_tab", containerTab],
  ["container_grid", containerGrid],
  ...buttonTypes.map((type) => [type, button] as const),
  ...separatorTypes.map((type) => [type, () => true] as const),
  ...fieldTypes.map((type) => [type, fieldPlacement] as const),
]);
// A kind added to elementInput needs its reader here (without one it would go to zod every time).
for (const type of elementTypes) if (!kinds.has(type)) throw new Error(`elementInputQuick: no reader for ${type}`);

/** The fields zod reads per element type, from each kind's shape in `elementInput`. */
const zodFields = new Map<unknown, ReadonlySet<string>>(
  elementTypes.map((type) => {
    const option = elementInput.options.find((o) => o.shape.element_type.safeParse(type).success)!;
    return [type, new Set(Object.keys(option.shape))] as const;
  }),
);

/** Whether `out` holds every field of `e` that zod reads for its kind (false: leave `e` to zod). */
export function tookEveryField(e: Readonly<Record<string, unknown>>, out: Readonly<Record<string, unknown>>): boolean {
  const fields = zodFields.get(e.element_type);
  if (!fields) return false;
  for (const key in e) if (fields.has(key) && !(key in out)) return false;
  return true;
}

/** `value` read as `elementInput` reads it, or undefined when zod has to (anything off). */
export function quickElementInput(value: unknown): ElementInput | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const e = value as Json;
  const kind = kinds.get(e.element_type);
  if (!kind) return undefined;
  const out = common(e);
  if (!out) return undefined;
  out.element_type = e.element_type;
  return kind(e, out) && tookEveryField(e, out) ? (out as ElementInput) : undefined;
}
