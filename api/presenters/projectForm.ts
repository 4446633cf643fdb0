/**
 * Project forms and reports (spec: form CRUD per project, form and report layouts, report
 * pattern and images; DESIGN §14 fields): a form with its fields and layout, a report
 * with its layout, pattern and images (their metadata; the bytes stay in storage).
 */
import { z } from "zod";
import { formLayout, reportLayout, reportPattern } from "../../shared/forms/projectDocs.ts";
import type { FormFieldRow, ProjectFormRow, ProjectReportRow, ReportImageRow } from "../../shared/forms/projectStore.ts";

export const formFieldResource = z.object({ id: z.number(), field_name: z.string(), label: z.string(), position: z.number() });
export const projectFormResource = z.object({
  id: z.number(),
  project_id: z.number(),
  name: z.string(),
  description: z.string(),
  schema_id: z.number(),
  table_name: z.string(),
  fields: z.array(formFieldResource),
  layout: formLayout,
  created_at: z.string(),
  updated_at: z.string(),
});
export type ProjectFormResource = z.infer<typeof projectFormResource>;

export function presentForm(row: ProjectFormRow, fields: readonly FormFieldRow[]): ProjectFormResource {
  return {
    ...row,
    fields: fields.filter((f) => f.form_id === row.id).map(({ id, field_name, label, position }) => ({ id, field_name, label, position })),
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
  created_at: z.string(),
  updated_at: z.string(),
});
export type ProjectReportResource = z.infer<typeof projectReportResource>;

export function presentImage(row: ReportImageRow): z.infer<typeof reportImageResource> {
  return { id: row.id, report_id: row.report_id, content_type: row.content_type, size: row.byte_size, width: row.width, height: row.height, sha256: row.sha256, created_at: row.created_at.toISOString() };
}

export function presentReport(row: ProjectReportRow, images: readonly ReportImageRow[]): ProjectReportResource {
  return {
    ...row,
    images: images.filter((i) => i.report_id === row.id).map(presentImage),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
