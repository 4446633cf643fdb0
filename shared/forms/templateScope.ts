/**
 * Forms and reports as templates see them (`forms`, `reports` in every run's scope, unless
 * a variable of that name is set): plain data a generator can turn into screens.
 *
 * forms:   [{id, name, description, schema_id, table_name, fields: [{field_name, label, position}],
 *            layout: {width, height, items: [{field_name, x, y, width, height, label?}]}}]
 * reports: [{id, name, description, schema_id, table_name,
 *            layout: {page_width, bands: {header, detail, footer: {height, items: [{type, x, y, width, height, text?, field_name?, image_id?}]}}},
 *            pattern: {group_by: [field_name], sort_by: [{field_name, direction}]},
 *            images: [{id, content_type, width, height}]}]
 */
import type { CommonQueryMethods } from "../db/pool.ts";
import { formFields, listForms, listReports, reportImages } from "./projectStore.ts";

export async function formsAndReportsScope(conn: CommonQueryMethods, projectId: number): Promise<{ forms: unknown[]; reports: unknown[] }> {
  const [forms, reports] = await Promise.all([listForms(conn, projectId), listReports(conn, projectId)]);
  const [fields, images] = await Promise.all([formFields(conn, forms.map((f) => f.id)), reportImages(conn, reports.map((r) => r.id))]);
  return {
    forms: forms.map((f) => ({
      id: f.id,
      name: f.name,
      description: f.description,
      schema_id: f.schema_id,
      table_name: f.table_name,
      fields: fields.filter((x) => x.form_id === f.id).map(({ field_name, label, position }) => ({ field_name, label, position })),
      layout: f.layout,
    })),
    reports: reports.map((r) => ({
      id: r.id,
      name: r.name,
      description: r.description,
      schema_id: r.schema_id,
      table_name: r.table_name,
      layout: r.layout,
      pattern: r.pattern,
      images: images.filter((i) => i.report_id === r.id).map(({ id, content_type, width, height }) => ({ id, content_type, width, height })),
    })),
  };
}
