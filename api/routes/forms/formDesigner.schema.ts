import { z } from "zod";
import { hexColor } from "../../../shared/forms/colors.ts";
import { elementInput, type ElementInput } from "../../../shared/forms/elementInput.ts";
import { quickElementInput } from "../../../shared/forms/elementInputQuick.ts";
import { windowTypes } from "../../../shared/forms/windowSizes.ts";
import { paginationQuery } from "../../pagination.ts";

const id = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
const name = z.string().trim().min(1).max(255);

const setFields = {
  name,
  description: z.string().max(5000).nullable(),
  visibility: z.enum(["private", "team", "public"]),
  project_id: id.nullable(),
  schema_id: id.nullable(),
  default_background_color: hexColor,
  default_window_color: hexColor,
  default_text_color: hexColor,
  default_button_color: hexColor,
  default_button_text_color: hexColor,
  is_active: z.boolean(),
};
export const createSetBody = z.object(setFields).partial().required({ name: true });
export const updateSetBody = z
  .object(setFields)
  .partial()
  .refine((v) => Object.keys(v).length > 0, { message: "Send at least one field to change." });

export const listSetsQuery = paginationQuery.extend({
  scope: z.enum(["all", "mine", "shared"]).default("all"),
  q: z.string().trim().max(255).optional(),
});

const px = z.number().int().min(1).max(10_000);
const windowFields = {
  name,
  display_name: z.string().trim().max(255).nullable(),
  window_type: z.enum(windowTypes),
  min_width: px,
  min_height: px,
  default_width: px,
  default_height: px,
  background_color: hexColor,
  window_color: hexColor,
  text_color: hexColor.nullable(),
  is_active: z.boolean(),
  sort_order: z.number().int().min(0).max(1_000_000),
};
export const createWindowBody = z
  .object({ form_set_id: id, ...windowFields })
  .partial()
  .required({ form_set_id: true, name: true, window_type: true });
export const updateWindowBody = z
  .object(windowFields)
  .partial()
  .refine((v) => Object.keys(v).length > 0, { message: "Send at least one field to change." });

export const createElementBody = z.intersection(z.object({ form_window_id: id }), elementInput);

export const layoutBody = z.object({
  version: z.number().int().min(1).max(2_147_483_647),
  elements: z.array(elementInput).max(1000),
});

/**
 * `layoutBody`'s reading of a well-formed body without zod (a layout sends hundreds of
 * elements, shared/forms/elementInputQuick.ts), or undefined when anything is off: then
 * `layoutBody` reads it and words the 422.
 */
export function quickLayoutBody(value: unknown): z.output<typeof layoutBody> | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const { version, elements } = value as Record<string, unknown>;
  if (typeof version !== "number" || !Number.isInteger(version) || version < 1 || version > 2_147_483_647) return undefined;
  if (!Array.isArray(elements) || elements.length > 1000) return undefined;
  const read: ElementInput[] = [];
  for (const element of elements) {
    const input = quickElementInput(element);
    if (input === undefined) return undefined;
    read.push(input);
  }
  return { version, elements: read };
}
