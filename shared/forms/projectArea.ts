/**
 * Forms and reports as a part of a project: `forms_count` and `reports_count` of the project
 * resource, and the `forms` and `reports` sections of project bundles. They import after the
 * schemas (their `schema_id` is mapped to the imported schema); a form or report whose
 * schema is not in the bundle is refused by import. Their tables and fields are taken as
 * written, not checked against the imported parse: a project keeps its forms and reports when
 * a re-parse drops their table or fields, and its own export must import again (a form's
 * layout items still name only fields the form lists). Report images travel in the bundle as
 * base64 (checked and re-encoded on import like an upload, stored anew); image items of an
 * imported layout point at the new images, and items of images the bundle lacks are dropped.
 */
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods } from "../db/pool.ts";
import { registerProjectCounter } from "../db/projects.ts";
import { invalidField, type FieldErrors } from "../errors.ts";
import { checkImage, defaultImageLimits, ImageRejected, type CheckedImage } from "../media/images.ts";
import { BUNDLE_MAX_BYTES, registerBundleSection, type ExportContext, type ImportContext } from "../projects/bundle.ts";
import { formLayout, reportBands, reportLayout, reportPattern, type ReportLayout } from "./projectDocs.ts";
import { formFields, insertBound, listForms, listReports, reportImages, saveFormLayout, saveReportDoc } from "./projectStore.ts";
import { insertReportImage, MAX_IMAGES_PER_REPORT, reportImageKey } from "./reportImages.ts";

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
/** A report image in a bundle: its id in the exporting project (what layout items name) and its bytes. */
const bundledImage = z.object({ id: z.number().int(), content_type: z.string().max(100).optional(), data: z.base64().max(BUNDLE_MAX_BYTES) });
const reportsSection = z
  .array(z.object({ ...binding, layout: reportLayout, pattern: reportPattern, images: z.array(bundledImage).max(MAX_IMAGES_PER_REPORT).default([]) }))
  .max(1000);
type ReportsSection = z.infer<typeof reportsSection>;
/** The section after `prepare`: each image checked and re-encoded. */
type PreparedReports = Array<Omit<ReportsSection[number], "images"> & { images: Array<{ id: number; image: CheckedImage }> }>;

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
      const id = await insertBound(tx, "form", ctx.projectId, ctx.userId, { ...form, schema_id: schemaIdIn(ctx, form.schema_id, `forms.${index}.schema_id`) }, true);
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

registerBundleSection<ReportsSection, PreparedReports>({
  name: "reports",
  schema: reportsSection,
  count: (data) => data.length,
  async prepare(data, ctx) {
    const errors: FieldErrors = {};
    const limits = { ...defaultImageLimits, maxBytes: ctx.config.media.maxBytes };
    const prepared: PreparedReports = [];
    for (const [index, report] of data.entries()) {
      const images: PreparedReports[number]["images"] = [];
      for (const [position, entry] of report.images.entries()) {
        const at = `${index}.images.${position}`;
        if (report.images.findIndex((other) => other.id === entry.id) !== position) errors[`${at}.id`] = [`Image ${entry.id} is listed twice.`];
        try {
          images.push({ id: entry.id, image: await checkImage(Buffer.from(entry.data, "base64"), limits) });
        } catch (error) {
          if (!(error instanceof ImageRejected)) throw error;
          errors[`${at}.data`] = [error.message];
        }
      }
      prepared.push({ ...report, images });
    }
    return Object.keys(errors).length ? { errors } : { data: prepared };
  },
  async export(conn: CommonQueryMethods, projectId: number, ctx: ExportContext) {
    const reports = await listReports(conn, projectId);
    const images = ctx.storage ? await reportImages(conn, reports.map((r) => r.id)) : [];
    const bytes = new Map<number, string>();
    for (const image of images) {
      const data = await ctx.storage!.readBuffer(image.storage_key);
      if (data) bytes.set(image.id, data.toString("base64"));
    }
    return reports.map((r) => ({
      name: r.name,
      description: r.description,
      schema_id: r.schema_id,
      table_name: r.table_name,
      layout: r.layout,
      pattern: r.pattern,
      images: images.filter((i) => i.report_id === r.id && bytes.has(i.id)).map((i) => ({ id: i.id, content_type: i.content_type, data: bytes.get(i.id)! })),
    }));
  },
  async import(tx, data, ctx) {
    for (const [index, report] of data.entries()) {
      const id = await insertBound(tx, "report", ctx.projectId, ctx.userId, { ...report, schema_id: schemaIdIn(ctx, report.schema_id, `reports.${index}.schema_id`) }, true);
      const imageIds = new Map<number, number>();
      for (const { id: oldId, image } of ctx.storage ? report.images : []) {
        const key = reportImageKey(id, image.extension);
        ctx.stored.push(key);
        await ctx.storage!.put(key, image.data, { contentType: image.contentType });
        imageIds.set(oldId, (await insertReportImage(tx, id, key, image)).id);
      }
      const bands = { ...report.layout.bands };
      for (const name of reportBands) {
        bands[name] = {
          ...bands[name],
          items: bands[name].items.flatMap((item): ReportLayout["bands"][typeof name]["items"] => {
            if (item.type !== "image") return [item];
            const imageId = imageIds.get(item.image_id);
            return imageId === undefined ? [] : [{ ...item, image_id: imageId }];
          }),
        };
      }
      await saveReportDoc(tx, id, "layout", { ...report.layout, bands });
      await saveReportDoc(tx, id, "pattern", report.pattern);
    }
  },
});
