/**
 * The documents of project forms and reports, as clients write them (DESIGN §14 leaves them
 * open): a form's layout places its fields; a report's layout has three bands (header,
 * detail, footer) of positioned items; its pattern groups and sorts by fields of its table.
 * Names are checked against the bound table by `checkFormLayout` and friends.
 */
import { z } from "zod";
import type { FieldErrors } from "../errors.ts";

const px = z.number().int().min(0).max(10_000);
const size = z.number().int().min(1).max(10_000);
const fieldName = z.string().trim().min(1).max(255);

export const formLayout = z.object({
  width: size.default(600),
  height: size.default(500),
  items: z
    .array(z.object({ field_name: fieldName, x: px, y: px, width: size, height: size, label: z.string().max(255).optional() }))
    .max(1000),
});
export type FormLayout = z.infer<typeof formLayout>;

const place = { x: px, y: px, width: size, height: size };
const reportItem = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text"), ...place, text: z.string().min(1).max(5000) }),
  z.object({ type: z.literal("field"), ...place, field_name: fieldName, format: z.string().max(100).optional() }),
  z.object({ type: z.literal("image"), ...place, image_id: z.number().int().positive().max(Number.MAX_SAFE_INTEGER) }),
  z.object({ type: z.literal("line"), ...place }),
]);
const band = z.object({ height: z.number().int().min(0).max(5000), items: z.array(reportItem).max(500) });
export const reportBands = ["header", "detail", "footer"] as const;
export const reportLayout = z.object({
  page_width: size.default(800),
  bands: z.object({ header: band, detail: band, footer: band }),
});
export type ReportLayout = z.infer<typeof reportLayout>;

export const reportPattern = z.object({
  group_by: z.array(fieldName).max(10),
  sort_by: z.array(z.object({ field_name: fieldName, direction: z.enum(["asc", "desc"]).default("asc") })).max(10),
});
export type ReportPattern = z.infer<typeof reportPattern>;

/** Problems of a form layout: items on the form's fields, inside its size. */
export function checkFormLayout(layout: FormLayout, formFields: ReadonlySet<string>): FieldErrors {
  const errors: FieldErrors = {};
  for (const [i, item] of layout.items.entries()) {
    if (!formFields.has(item.field_name)) (errors[`items.${i}.field_name`] ??= []).push(`The field ${item.field_name} is not on the form; add it first.`);
    if (item.x + item.width > layout.width) (errors[`items.${i}.x`] ??= []).push(`The item does not fit in the form's width of ${layout.width}.`);
    if (item.y + item.height > layout.height) (errors[`items.${i}.y`] ??= []).push(`The item does not fit in the form's height of ${layout.height}.`);
  }
  return errors;
}

/** Why a report may not name field `name`: by default, it is not a field of the report's table. */
export type UnknownField = (name: string) => string;
const notOfTable: UnknownField = (name) => `The field ${name} is not a field of the report's table.`;

/**
 * The fields a report's layout and pattern name, each once, in order (layout bands, then
 * group_by, then sort_by).
 */
export function reportFieldNames(layout: ReportLayout, pattern: ReportPattern): string[] {
  const names = new Set<string>();
  for (const name of reportBands) for (const item of layout.bands[name].items) if (item.type === "field") names.add(item.field_name);
  for (const name of pattern.group_by) names.add(name);
  for (const s of pattern.sort_by) names.add(s.field_name);
  return [...names];
}

/** Problems of a report layout: field items on fields of the table, image items on the report's images, items inside their band. */
export function checkReportLayout(layout: ReportLayout, tableFields: ReadonlySet<string>, imageIds: ReadonlySet<number>, unknownField: UnknownField = notOfTable): FieldErrors {
  const errors: FieldErrors = {};
  for (const name of reportBands) {
    const b = layout.bands[name];
    for (const [i, item] of b.items.entries()) {
      const at = (field: string) => (errors[`bands.${name}.items.${i}.${field}`] ??= []);
      if (item.type === "field" && !tableFields.has(item.field_name)) at("field_name").push(unknownField(item.field_name));
      if (item.type === "image" && !imageIds.has(item.image_id)) at("image_id").push(`Image ${item.image_id} is not an image of this report.`);
      if (item.x + item.width > layout.page_width) at("x").push(`The item does not fit in the page width of ${layout.page_width}.`);
      if (item.y + item.height > b.height) at("y").push(`The item does not fit in the ${name} band's height of ${b.height}.`);
    }
  }
  return errors;
}

/** Problems of a pattern: every field a field of the table, none twice. */
export function checkReportPattern(pattern: ReportPattern, tableFields: ReadonlySet<string>, unknownField: UnknownField = notOfTable): FieldErrors {
  const errors: FieldErrors = {};
  const check = (list: string[], key: string) => {
    const seen = new Set<string>();
    for (const [i, name] of list.entries()) {
      if (!tableFields.has(name)) (errors[`${key}.${i}`] ??= []).push(unknownField(name));
      else if (seen.has(name)) (errors[`${key}.${i}`] ??= []).push(`The field ${name} is listed twice.`);
      seen.add(name);
    }
  };
  check(pattern.group_by, "group_by");
  check(pattern.sort_by.map((s) => s.field_name), "sort_by");
  return errors;
}
