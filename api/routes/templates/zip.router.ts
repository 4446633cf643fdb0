/**
 * Templates as zip files (DESIGN §11 "template import"): POST …/templates/import creates a
 * project template from an uploaded zip; GET …/templates/{t}/export downloads one in the same
 * layout (template.json + files/, see shared/templates/zipLayout.ts), so the two round-trip.
 */
import { z } from "zod";
import { createZipStream } from "../../../shared/archive/zipWriter.ts";
import { invalid } from "../../../shared/errors.ts";
import { loadFull } from "../../../shared/templates/store.ts";
import { insertTemplate } from "../../../shared/templates/write.ts";
import { readTemplateZip, UPLOAD_FIELD } from "../../../shared/templates/zipImport.ts";
import { templateZipEntries } from "../../../shared/templates/zipExport.ts";
import { currentUser } from "../../context.ts";
import { projectForWrite } from "../../policies/projectGuard.ts";
import { templateResource } from "../../presenters/template.ts";
import { downloadName } from "../projects/bundle.router.ts";
import { projectParams } from "../projects/projects.schema.ts";
import { defineRoute } from "../route.ts";
import { templateForRead } from "./load.ts";
import { reloadTemplate } from "./update.ts";
import { compilerBusy, projectTemplateParams } from "./templates.schema.ts";
import { projectStateResponses } from "../projectStates.ts";

const tags = ["Templates"];

/** The uploaded file of the multipart field, as koa-body hands it over. */
function uploadedFile(value: unknown): { filepath: string; size: number } {
  const file = value as { filepath?: unknown; size?: unknown } | undefined;
  if (Array.isArray(value)) throw invalid({ [UPLOAD_FIELD]: ["Upload one zip file."] });
  if (!file || typeof file !== "object" || typeof file.filepath !== "string") {
    throw invalid({ [UPLOAD_FIELD]: [`Upload the template as a zip file in the multipart field "${UPLOAD_FIELD}".`] });
  }
  return { filepath: file.filepath, size: typeof file.size === "number" ? file.size : 0 };
}

const importRoute = defineRoute({
  method: "post",
  path: "/projects/{projectId}/templates/import",
  summary: "Create a template in the project from a zip (template.json and files/)",
  description: [
    `Multipart field \`${UPLOAD_FIELD}\`: a zip holding \`template.json\` (name, description, engine_type, content, variables, files`,
    "with file_name, order, repeat and an optional source) and each file's content under `files/` (at `files/<file_name>`, or",
    "`files/<source>`), at the root or inside one top-level folder. GET …/templates/{templateId}/export writes this layout.",
    "422 `errors` are keyed by archive entry, by `template.json: <field>`, or by `file:line:column` (code `template_error`)",
    "for template syntax errors; archive refusals keep their `archive_*` code. Nothing is written unless all of it is valid.",
  ].join(" "),
  tags,
  auth: "bearer",
  params: projectParams,
  body: z.record(z.string(), z.unknown()),
  bodyKind: "multipart",
  responses: { ...projectStateResponses, ...compilerBusy, 201: { description: "Imported", schema: z.object({ message: z.string(), template: templateResource }) } },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    // Those who may not add templates here learn nothing about their upload; the writing
    // transaction checks again, as the project may be locked meanwhile.
    await ctx.deps.pool.transaction((tx) => projectForWrite(tx, params.projectId, user, "content"));
    const input = await readTemplateZip(uploadedFile(body[UPLOAD_FIELD]).filepath, ctx.deps.compiler);
    const template = await ctx.deps.pool.transaction(async (tx) => {
      const project = await projectForWrite(tx, params.projectId, user, "content");
      return reloadTemplate(tx, await insertTemplate(tx, { projectId: project.id }, user.id, input));
    });
    ctx.status = 201;
    ctx.body = { message: "Template imported.", template };
  },
});

const exportRoute = defineRoute({
  method: "get",
  path: "/projects/{projectId}/templates/{templateId}/export",
  summary: "Download a template as a zip that POST …/templates/import reads back",
  tags,
  auth: "bearer",
  params: projectTemplateParams,
  responses: { 200: { description: "The template zip (template.json and files/)", contentType: "application/zip" } },
  handler: async (ctx, { params }) => {
    const { template } = await templateForRead(ctx.deps.pool, params.projectId, params.templateId, currentUser(ctx));
    const full = await loadFull(ctx.deps.pool, template);
    ctx.set("Content-Disposition", `attachment; filename="${downloadName(template.name, "zip")}"`);
    ctx.set("Cache-Control", "private, no-store");
    ctx.type = "application/zip";
    ctx.body = createZipStream(templateZipEntries(full), { mtime: template.updated_at });
  },
});

export const templateZipRoutes = [importRoute, exportRoute];
