/**
 * Forms and reports as a part of a project: `forms_count` and `reports_count` of the project
 * resource, and the `forms` and `reports` sections of project bundles. They import after the
 * schemas (their `schema_id` is mapped to the imported schema); a form or report whose
 * schema is not in the bundle is refused by import. Report images are not carried by the
 * bundle: image items of an imported layout are dropped.
 */
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods } from "../db/pool.ts";
import { registerProjectCounter } from "../db/projects.ts";
import { invalidField } from "../errors.ts";
import { registerBundleSection, type ImportContext } from "../projects/bundle.ts";
import { formLayout, reportBands, reportLayout, reportPattern } from "./projectDocs.ts";
import { formFields, insertBound, listForms, listReports, saveFormLayout, saveReportDoc } from "./projectStore.ts";

registerProjectCounter("forms_count", sql.fragment`(select count(*)::int from project_forms f where f.project_id = p.id)`);
registerProjectCounter("reports_count", sql.fragment`(select count(*)::int from project_reports r where r.project_id = p.id)`);

const binding = {
  name: z.string().trim().min(1).max(255),
  description: z.string().max(5000).default(""),
  schema_id: z.number().int(),
  table_name: z.string().trim().min(1).max(255),
};
const formsSection = z
  .array(z.object({ ...binding, fields: z.array(z.object({ field_name: z.string().min(1).max(255), label: z.string().min(1).max(255) })).max(1000), layout: formLayout }))
  .max(1000);
const reportsSection = z.array(z.object({ ...binding, layout: reportLayout, pattern: reportPattern })).max(1000);

function schemaIdIn(ctx: ImportContext, oldId: number, at: string): number {
  const id = ctx.ids.get("schemas")?.get(oldId);
  if (id === undefined) throw invalidField(at, `Schema ${oldId} is not in the bundle.`);
  return id;
}

registerBundleSection<z.infer<typeof formsSection>>({
  name: "forms",
  schema: formsSection,
  count: (data) => data.length,
  async export(conn: CommonQueryMethods, projectId: number) {
    const rows = await listForms(conn, projectId);
    const fields = await formFields(conn, rows.map((r) => r.id));
    return rows.map((r) => ({
      name: r.name,
      description: r.description,
      schema_id: r.schema_id,
      table_name: r.table_name,
      fields: fields.filter((f) => f.form_id === r.id).map((f) => ({ field_name: f.field_name, label: f.label })),
      layout: r.layout,
    }));
  },
  async import(tx, data, ctx) {
    for (const [index, form] of data.entries()) {
      const id = await insertBound(tx, "form", ctx.projectId, ctx.userId, { ...form, schema_id: schemaIdIn(ctx, form.schema_id, `forms.${index}.schema_id`) });
      for (const [position, field] of form.fields.entries()) {
        await tx.query(sql.type(ignoredRow)`
          insert into project_form_fields (form_id, field_name, label, position) values (${id}, ${field.field_name}, ${field.label}, ${position})
          on conflict do nothing`);
      }
      const names = new Set(form.fields.map((f) => f.field_name));
      await saveFormLayout(tx, id, { ...form.layout, items: form.layout.items.filter((item) => names.has(item.field_name)) });
    }
  },
});

registerBundleSection<z.infer<typeof reportsSection>>({
  name: "reports",
  schema: reportsSection,
  count: (data) => data.length,
  async export(conn: CommonQueryMethods, projectId: number) {
    return (await listReports(conn, projectId)).map((r) => ({
      name: r.name,
      description: r.description,
      schema_id: r.schema_id,
      table_name: r.table_name,
      layout: r.layout,
      pattern: r.pattern,
    }));
  },
  async import(tx, data, ctx) {
    for (const [index, report] of data.entries()) {
      const id = await insertBound(tx, "report", ctx.projectId, ctx.userId, { ...report, schema_id: schemaIdIn(ctx, report.schema_id, `reports.${index}.schema_id`) });
      const bands = { ...report.layout.bands };
      for (const name of reportBands) bands[name] = { ...bands[name], items: bands[name].items.filter((item) => item.type !== "image") };
      await saveReportDoc(tx, id, "layout", { ...report.layout, bands });
      await saveReportDoc(tx, id, "pattern", report.pattern);
    }
  },
});
