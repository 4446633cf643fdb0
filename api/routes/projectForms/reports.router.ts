/**
 * Reports of a project (DESIGN §11, §14): `/projects/{p}/reports[/{r}]` bound to a table,
 * the banded layout and the grouping/sorting pattern (`GET|PUT …/layout`, `…/pattern`), and
 * images (`POST …/images` multipart `image`, checked and re-encoded by shared/media/images.ts,
 * kept in storage; `DELETE …/images/{id}` also drops the layout items showing it; the bytes
 * are served by reportImages.router.ts).
 */
import { readFile, stat } from "node:fs/promises";
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods } from "../../../shared/db/pool.ts";
import type { UserRow } from "../../../shared/db/users.ts";
import { AppError, invalid, notFound } from "../../../shared/errors.ts";
import { checkReportLayout, checkReportPattern, reportBands, reportFieldNames, reportLayout, reportPattern, type ReportLayout } from "../../../shared/forms/projectDocs.ts";
import { findReport, insertBound, listReports, reportImages, saveReportDoc, tableFields, touch, updateBound } from "../../../shared/forms/projectStore.ts";
import { insertReportImage, MAX_IMAGES_PER_REPORT, reportImageKey } from "../../../shared/forms/reportImages.ts";
import { loadSchemaFields } from "../../../shared/forms/schemaFields.ts";
import { schemaFieldsById, staleBinding } from "../../../shared/forms/staleBindings.ts";
import { checkImage, defaultImageLimits, ImageRejected } from "../../../shared/media/images.ts";
import { currentUser } from "../../context.ts";
import { projectForRead, projectForWrite } from "../../policies/projectGuard.ts";
import { presentImage, presentReport, projectReportResource, reportImageResource, type ProjectReportResource } from "../../presenters/projectForm.ts";
import { messageResponse } from "../auth/auth.schema.ts";
import { projectParams } from "../projects/projects.schema.ts";
import { defineRoute } from "../route.ts";
import { createBoundBody, projectReportParams, reportImageParams, updateBoundBody } from "./projectForms.schema.ts";

const tags = ["Project reports"];
const envelope = z.object({ message: z.string(), report: projectReportResource });
const writeStates = { 402: { description: "The project's subscription expired" }, 409: { description: "The project is archived" }, 423: { description: "The project is locked" } };
const FIELD = "image";

async function present(conn: CommonQueryMethods, projectId: number, id: number): Promise<ProjectReportResource> {
  const row = await findReport(conn, projectId, id);
  if (!row) throw notFound("Report");
  const [images, tables] = await Promise.all([reportImages(conn, [row.id]), schemaFieldsById(conn, projectId, [row.schema_id])]);
  return presentReport(row, images, tables.get(row.schema_id));
}

async function reportForRead(conn: CommonQueryMethods, params: { projectId: number; reportId: number }, user: UserRow) {
  const project = await projectForRead(conn, params.projectId, user);
  const row = await findReport(conn, project.id, params.reportId);
  if (!row) throw notFound("Report");
  return row;
}

async function reportForWrite(tx: CommonQueryMethods, params: { projectId: number; reportId: number }, user: UserRow) {
  const project = await projectForWrite(tx, params.projectId, user, "content");
  const row = await findReport(tx, project.id, params.reportId, true);
  if (!row) throw notFound("Report");
  return row;
}

const list = defineRoute({
  method: "get",
  path: "/projects/{projectId}/reports",
  summary: "The project's reports with layouts, patterns and images",
  tags,
  auth: "bearer",
  params: projectParams,
  responses: { 200: { description: "The reports", schema: z.object({ data: z.array(projectReportResource) }) } },
  handler: async (ctx, { params }) => {
    const { pool } = ctx.deps;
    const project = await projectForRead(pool, params.projectId, currentUser(ctx));
    const rows = await listReports(pool, project.id);
    const [images, tables] = await Promise.all([reportImages(pool, rows.map((r) => r.id)), schemaFieldsById(pool, project.id, rows.map((r) => r.schema_id))]);
    ctx.body = { data: rows.map((row) => presentReport(row, images, tables.get(row.schema_id))) };
  },
});

const create = defineRoute({
  method: "post",
  path: "/projects/{projectId}/reports",
  summary: "Create a report bound to a table of one of the project's schemas",
  description: "Starts with empty header (60 px), detail (24 px) and footer (40 px) bands and no grouping or sorting.",
  tags,
  auth: "bearer",
  params: projectParams,
  body: createBoundBody,
  responses: { 201: { description: "Created", schema: envelope }, ...writeStates },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const report = await ctx.deps.pool.transaction(async (tx) => {
      const project = await projectForWrite(tx, params.projectId, user, "content");
      const id = await insertBound(tx, "report", project.id, user.id, { ...body, description: body.description ?? "" });
      return present(tx, project.id, id);
    });
    ctx.status = 201;
    ctx.body = { message: "Report created.", report };
  },
});

const show = defineRoute({
  method: "get",
  path: "/projects/{projectId}/reports/{reportId}",
  summary: "A report",
  tags,
  auth: "bearer",
  params: projectReportParams,
  responses: { 200: { description: "The report", schema: z.object({ report: projectReportResource }) } },
  handler: async (ctx, { params }) => {
    const row = await reportForRead(ctx.deps.pool, params, currentUser(ctx));
    ctx.body = { report: await present(ctx.deps.pool, row.project_id, row.id) };
  },
});

const update = defineRoute({
  method: "put",
  path: "/projects/{projectId}/reports/{reportId}",
  summary: "Update a report; binding another table clears its pattern",
  tags,
  auth: "bearer",
  params: projectReportParams,
  body: updateBoundBody,
  responses: { 200: { description: "Updated", schema: envelope }, ...writeStates },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const report = await ctx.deps.pool.transaction(async (tx) => {
      const row = await reportForWrite(tx, params, user);
      await updateBound(tx, "report", row, body);
      if (body.schema_id !== undefined || body.table_name !== undefined) {
        // Field items of the old table go with it.
        const fields = await tableFields(tx, row.project_id, body.schema_id ?? row.schema_id, body.table_name ?? row.table_name);
        await saveReportDoc(tx, row.id, "layout", withoutItems(row.layout, (item) => item.type === "field" && !fields.has(item.field_name)));
      }
      return present(tx, row.project_id, row.id);
    });
    ctx.body = { message: "Report updated.", report };
  },
});

const remove = defineRoute({
  method: "delete",
  path: "/projects/{projectId}/reports/{reportId}",
  summary: "Delete a report with its images",
  tags,
  auth: "bearer",
  params: projectReportParams,
  responses: { 200: { description: "Deleted", schema: messageResponse }, ...writeStates },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    const keys = await ctx.deps.pool.transaction(async (tx) => {
      const row = await reportForWrite(tx, params, user);
      const images = await reportImages(tx, [row.id]);
      await tx.query(sql.type(ignoredRow)`delete from project_reports where id = ${row.id}`);
      return images.map((i) => i.storage_key);
    });
    for (const key of keys) await ctx.deps.storage.delete(key);
    ctx.body = { message: "Report deleted." };
  },
});

type Item = ReportLayout["bands"]["header"]["items"][number];
const emptyLayout: ReportLayout = { page_width: 800, bands: { header: { height: 0, items: [] }, detail: { height: 0, items: [] }, footer: { height: 0, items: [] } } };
function withoutItems(layout: ReportLayout, drop: (item: Item) => boolean): ReportLayout {
  const bands = { ...layout.bands };
  for (const name of reportBands) bands[name] = { ...bands[name], items: bands[name].items.filter((item) => !drop(item)) };
  return { ...layout, bands };
}

function docRoutes<K extends "layout" | "pattern">(key: K, schema: K extends "layout" ? typeof reportLayout : typeof reportPattern, description: string) {
  const read = defineRoute({
    method: "get",
    path: `/projects/{projectId}/reports/{reportId}/${key}`,
    summary: `A report's ${key}`,
    tags,
    auth: "bearer",
    params: projectReportParams,
    responses: {
      200: {
        description: `The ${key}, with the names of the fields it names that a re-parse of the schema removed (\`stale_fields\`)`,
        schema: z.object({ [key]: schema, stale_fields: z.array(z.string()) }),
      },
    },
    handler: async (ctx, { params }) => {
      const { pool } = ctx.deps;
      const row = await reportForRead(pool, params, currentUser(ctx));
      const names = key === "layout" ? reportFieldNames(row.layout, { group_by: [], sort_by: [] }) : reportFieldNames(emptyLayout, row.pattern);
      const tables = (await schemaFieldsById(pool, row.project_id, [row.schema_id])).get(row.schema_id);
      ctx.body = { [key]: row[key], stale_fields: staleBinding(tables, row.table_name, names).staleFields };
    },
  });
  const write = defineRoute({
    method: "put",
    path: `/projects/{projectId}/reports/{reportId}/${key}`,
    summary: `Replace a report's ${key}`,
    description,
    tags,
    auth: "bearer",
    params: projectReportParams,
    body: schema,
    responses: { 200: { description: "Saved", schema: z.object({ message: z.string(), [key]: schema }) }, ...writeStates },
    handler: async (ctx, { params, body }) => {
      const user = currentUser(ctx);
      await ctx.deps.pool.transaction(async (tx) => {
        const row = await reportForWrite(tx, params, user);
        // A field the report names already stays allowed when a re-parse removed it (or its
        // table): a write that sends it back as stored works; one that adds it is refused.
        const table = (await loadSchemaFields(tx, row.project_id, row.schema_id)).get(row.table_name);
        const fields = new Set([...(table ?? []), ...reportFieldNames(row.layout, row.pattern)]);
        const unknown = table
          ? (name: string) => `The field ${name} is not a field of the report's table ${row.table_name}.`
          : (name: string) => `The field ${name} cannot be added: the report's table ${row.table_name} is no longer in its schema (a new parse removed it); bind the report to another table first.`;
        const doc = body as z.infer<typeof reportLayout> & z.infer<typeof reportPattern>;
        const errors =
          key === "layout" ? checkReportLayout(doc, fields, new Set((await reportImages(tx, [row.id])).map((i) => i.id)), unknown) : checkReportPattern(doc, fields, unknown);
        if (Object.keys(errors).length) throw invalid(errors);
        await saveReportDoc(tx, row.id, key, doc);
      });
      ctx.body = { message: `The ${key} is saved.`, [key]: body };
    },
  });
  return [read, write];
}

const layoutRoutes = docRoutes(
  "layout",
  reportLayout,
  "`{page_width, bands: {header, detail, footer}}`, each band `{height, items}`; an item is `{type, x, y, width, height}` with `text` (type text), `field_name` of the report's table (type field), `image_id` of the report's images (type image), or nothing more (type line), inside the page width and its band's height. A field the report names already is kept when a re-parse of the schema removed it (or its table); adding one answers 422 naming it.",
);
const patternRoutes = docRoutes("pattern", reportPattern, "`{group_by: [field_name], sort_by: [{field_name, direction: asc|desc}]}` over fields of the report's table, each at most once per list. A field the report names already is kept when a re-parse of the schema removed it (or its table); adding one answers 422 naming it.");

interface UploadedFile {
  filepath: string;
  size: number;
}
const isUploadedFile = (value: unknown): value is UploadedFile => value !== null && typeof value === "object" && typeof (value as UploadedFile).filepath === "string";

const uploadBody = z
  .object({ [FIELD]: z.unknown().optional() })
  .loose()
  .superRefine((body, ctx) => {
    if (Array.isArray(body[FIELD])) ctx.addIssue({ code: "custom", path: [FIELD], message: "Upload one image at a time." });
    else if (!isUploadedFile(body[FIELD])) ctx.addIssue({ code: "custom", path: [FIELD], message: `The ${FIELD} field must be an image file.` });
  });

const addImage = defineRoute({
  method: "post",
  path: "/projects/{projectId}/reports/{reportId}/images",
  summary: "Add an image to a report (multipart `image`)",
  description: `PNG, JPEG, GIF, WebP or AVIF up to MEDIA_MAX_BYTES, checked by its content and re-encoded without metadata; SVG and anything else is refused (422 \`image_svg\`, \`image_type\`, \`image_too_large\`, \`image_dimensions\`, \`image_unreadable\`). At most ${MAX_IMAGES_PER_REPORT} per report.`,
  tags,
  auth: "bearer",
  params: projectReportParams,
  body: uploadBody,
  bodyKind: "multipart",
  responses: { 201: { description: "Stored", schema: z.object({ message: z.string(), image: reportImageResource }) }, ...writeStates },
  handler: async (ctx, { params, body }) => {
    const { pool, storage, config } = ctx.deps;
    const user = currentUser(ctx);
    await pool.transaction((tx) => reportForWrite(tx, params, user)); // who may not add learns nothing about the upload
    const file = body[FIELD] as UploadedFile;
    const { size } = await stat(file.filepath);
    const maxBytes = config.media.maxBytes;
    let image;
    try {
      image = await checkImage(size > maxBytes ? Buffer.alloc(maxBytes + 1) : await readFile(file.filepath), { ...defaultImageLimits, maxBytes });
    } catch (error) {
      if (error instanceof ImageRejected) throw new AppError(422, error.code, error.message, { [FIELD]: [error.message] });
      throw error;
    }
    const key = reportImageKey(params.reportId, image.extension);
    await storage.put(key, image.data, { contentType: image.contentType });
    try {
      const row = await pool.transaction(async (tx) => {
        const report = await reportForWrite(tx, params, user);
        const count = (await reportImages(tx, [report.id])).length;
        if (count >= MAX_IMAGES_PER_REPORT) throw new AppError(422, "validation_failed", `A report holds at most ${MAX_IMAGES_PER_REPORT} images.`, { [FIELD]: [`A report holds at most ${MAX_IMAGES_PER_REPORT} images.`] });
        const inserted = await insertReportImage(tx, report.id, key, image);
        await touch(tx, "report", report.id);
        return inserted;
      });
      ctx.status = 201;
      ctx.body = { message: "Image added.", image: presentImage(row) };
    } catch (error) {
      await storage.delete(key);
      throw error;
    }
  },
});

const removeImage = defineRoute({
  method: "delete",
  path: "/projects/{projectId}/reports/{reportId}/images/{imageId}",
  summary: "Remove an image from a report, with the layout items showing it",
  tags,
  auth: "bearer",
  params: reportImageParams,
  responses: { 200: { description: "Removed", schema: messageResponse }, ...writeStates },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    const key = await ctx.deps.pool.transaction(async (tx) => {
      const report = await reportForWrite(tx, params, user);
      const image = (await reportImages(tx, [report.id])).find((i) => i.id === params.imageId);
      if (!image) throw notFound("Report image");
      await tx.query(sql.type(ignoredRow)`delete from project_report_images where id = ${image.id}`);
      await saveReportDoc(tx, report.id, "layout", withoutItems(report.layout, (item) => item.type === "image" && item.image_id === image.id));
      return image.storage_key;
    });
    await ctx.deps.storage.delete(key);
    ctx.body = { message: "Image removed." };
  },
});

export const projectReportRoutes = [list, create, show, update, remove, ...layoutRoutes, ...patternRoutes, addImage, removeImage];
