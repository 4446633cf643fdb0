/**
 * Project forms and reports (spec: form CRUD per project, form and report layouts, report
 * pattern and images; DESIGN §14 fields): a form with its fields and layout, a report
 * with its layout, pattern and images (their metadata; the bytes stay in storage).
 */
import { z } from "zod";
import { formLayout, reportFieldNames, reportLayout, reportPattern } from "../../shared/forms/projectDocs.ts";
import type { FormFieldRow, ProjectFormRow, ProjectReportRow, ReportImageRow } from "../../shared/forms/projectStore.ts";
import type { SchemaFields } from "../../shared/forms/schemaFields.ts";
import { staleBinding } from "../../shared/forms/staleBindings.ts";

export const formFieldResource = z.object({
  id: z.number(),
  field_name: z.string(),
  label: z.string(),
  position: z.number(),
  /** A re-parse of the schema removed this field (or the form's table). */
  missing: z.boolean(),
});
export const projectFormResource = z.object({
  id: z.number(),
  project_id: z.number(),
  name: z.string(),
  description: z.string(),
  schema_id: z.number(),
  table_name: z.string(),
  fields: z.array(formFieldResource),
  layout: formLayout,
  /** A re-parse of the schema removed the form's table. */
  table_missing: z.boolean(),
  /** Names of the form's fields (and so of its layout items) that the table no longer has. */
  stale_fields: z.array(z.string()),
  created_at: z.string(),
  updated_at: z.string(),
});
export type ProjectFormResource = z.infer<typeof projectFormResource>;

/** A form with its fields; `tables` is its schema's latest parse (shared/forms/staleBindings.ts), to flag what it lost. */
export function presentForm(row: ProjectFormRow, fields: readonly FormFieldRow[], tables: SchemaFields | undefined): ProjectFormResource {
  const own = fields.filter((f) => f.form_id === row.id);
  const stale = staleBinding(tables, row.table_name, own.map((f) => f.field_name));
  const staleNames = new Set(stale.staleFields);
  return {
    ...row,
    fields: own.map(({ id, field_name, label, position }) => ({ id, field_name, label, position, missing: staleNames.has(field_name) })),
    table_missing: stale.tableMissing,
    stale_fields: stale.staleFields,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export const reportImageResource = z.object({
  id: z.number(),
  report_id: z.number(),
  content_type: z.string(),
  size: z.number(),
  width: z.number(),
  height: z.number(),
  sha256: z.string(),
  created_at: z.string(),
});
export const projectReportResource = z.object({
  id: z.number(),
  project_id: z.number(),
  name: z.string(),
  description: z.string(),
  schema_id: z.number(),
  table_name: z.string(),
  layout: reportLayout,
  pattern: reportPattern,
  images: z.array(reportImageResource),
  /** A re-parse of the schema removed the report's table. */
  table_missing: z.boolean(),
  /** Fields its layout or pattern name that the table no longer has (all of them when the table is gone). */
  stale_fields: z.array(z.string()),
  created_at: z.string(),
  updated_at: z.string(),
});
export type ProjectReportResource = z.infer<typeof projectReportResource>;

export function presentImage(row: ReportImageRow): z.infer<typeof reportImageResource> {
  return { id: row.id, report_id: row.report_id, content_type: row.content_type, size: row.byte_size, width: row.width, height: row.height, sha256: row.sha256, created_at: row.created_at.toISOString() };
}

/** A report with its images; `tables` is its schema's latest parse (shared/forms/staleBindings.ts), to flag what it lost. */
export function presentReport(row: ProjectReportRow, images: readonly ReportImageRow[], tables: SchemaFields | undefined): ProjectReportResource {
  const stale = staleBinding(tables, row.table_name, reportFieldNames(row.layout, row.pattern));
  return {
    ...row,
    images: images.filter((i) => i.report_id === row.id).map(presentImage),
    table_missing: stale.tableMissing,
    stale_fields: stale.staleFields,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
