/**
 * Export and import of whole projects (DESIGN §11): GET /projects/{p}/export downloads
 * the versioned bundle; POST /projects/import/validate checks one without writing; POST
 * /projects/import recreates it under the caller. A bundle arrives as a JSON body
 * (`{"bundle": {...}}` or the bundle itself) or as a multipart file field `bundle`.
 */
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { BUNDLE_MAX_BYTES, checkBundle, exportProject, importProject } from "../../../shared/projects/bundle.ts";
import { invalid } from "../../../shared/errors.ts";
import { currentUser, type AppContext } from "../../context.ts";
import { jsonTextDepth, MAX_BODY_DEPTH, refuseDeepBody } from "../../middleware/bodyDepth.ts";
import { projectForRead } from "../../policies/projectGuard.ts";
import { canManageProject } from "../../policies/project.ts";
import { authorize } from "../../policies/authorize.ts";
import { projectResource } from "../../presenters/project.ts";
import { defineRoute } from "../route.ts";
import { reloadProject } from "./load.ts";
import { projectParams } from "./projects.schema.ts";

/** A file name safe in a Content-Disposition header (ASCII, no quotes or separators). */
export function downloadName(base: string, extension: string): string {
  const slug = base.normalize("NFKD").replace(/[^\w.-]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 60) || "download";
  return `${slug}.${extension}`;
}

async function readBundleInput(ctx: AppContext, body: Record<string, unknown>): Promise<{ value: unknown; size: number }> {
  const file = body.bundle as { filepath?: string; size?: number } | undefined;
  if (file && typeof file === "object" && typeof file.filepath === "string") {
    if ((file.size ?? 0) > BUNDLE_MAX_BYTES) return { value: null, size: file.size ?? 0 };
    const text = await readFile(file.filepath, "utf8");
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw invalid({ bundle: ["The bundle file is not valid JSON."] });
    }
    // A file is not a JSON body, so the body's depth bound is applied here, as if it had been
    // sent as `{"bundle": …}`: the checks after this walk the bundle recursively.
    if (jsonTextDepth(text) + 1 > MAX_BODY_DEPTH) refuseDeepBody({ bundle: value });
    return { value, size: Buffer.byteLength(text) };
  }
  const value = "bundle" in body ? body.bundle : body;
  return { value, size: Buffer.byteLength(JSON.stringify(value ?? null)) };
}

const exportRoute = defineRoute({
  method: "get",
  path: "/projects/{projectId}/export",
  summary: "Download a project as a versioned bundle",
  tags: ["Projects"],
  auth: "bearer",
  params: projectParams,
  responses: { 200: { description: "The bundle (JSON download)", contentType: "application/json" } },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    const project = await projectForRead(ctx.deps.pool, params.projectId, user);
    authorize(canManageProject(user, project), "Only the project's owner and admins may export it.");
    const bundle = await exportProject(ctx.deps.pool, project.id, { storage: ctx.deps.storage });
    const name = downloadName(`${project.name}-${bundle.exported_at.slice(0, 10)}`, "json");
    ctx.set("Content-Disposition", `attachment; filename="${name}"`);
    ctx.type = "application/json";
    ctx.body = bundle;
  },
});

const bundleBody = z.record(z.string(), z.unknown());

const validate = defineRoute({
  method: "post",
  path: "/projects/import/validate",
  summary: "Check a project bundle without importing it",
  tags: ["Projects"],
  auth: "bearer",
  scope: "read", // checks the bundle; writes nothing
  body: bundleBody,
  bodyKind: "json-or-multipart",
  bodyLimitBytes: BUNDLE_MAX_BYTES + 1024 * 1024,
  responses: {
    200: {
      description: "Whether the bundle can be imported; what it holds, or what is wrong",
      schema: z.object({ valid: z.boolean(), errors: z.record(z.string(), z.array(z.string())), summary: z.record(z.string(), z.union([z.number(), z.string()])).nullable() }),
    },
  },
  handler: async (ctx, { body }) => {
    const input = await readBundleInput(ctx, body);
    const check = await checkBundle(input.value, input.size, { config: ctx.deps.config });
    ctx.body = check.valid ? { valid: true, errors: {}, summary: check.summary } : { valid: false, errors: check.errors, summary: null };
  },
});

const importRoute = defineRoute({
  method: "post",
  path: "/projects/import",
  summary: "Create a project from a bundle, owned by the caller",
  tags: ["Projects"],
  auth: "bearer",
  body: bundleBody,
  bodyKind: "json-or-multipart",
  bodyLimitBytes: BUNDLE_MAX_BYTES + 1024 * 1024,
  responses: { 201: { description: "Imported", schema: z.object({ message: z.string(), project: projectResource }) } },
  handler: async (ctx, { body }) => {
    const user = currentUser(ctx);
    const input = await readBundleInput(ctx, body);
    const check = await checkBundle(input.value, input.size, { config: ctx.deps.config });
    if (!check.valid) throw invalid(check.errors);
    const { pool, storage } = ctx.deps;
    const stored: string[] = [];
    const project = await pool
      .transaction(async (tx) => reloadProject(tx, user, await importProject(tx, check, user.id, { storage, stored })))
      .catch(async (error: unknown) => {
        // The files of a rolled-back import belong to nothing.
        await Promise.all(stored.map((key) => storage.delete(key)));
        throw error;
      });
    ctx.status = 201;
    ctx.body = { message: "Project imported.", project };
  },
});

export const bundleRoutes = [exportRoute, validate, importRoute];
