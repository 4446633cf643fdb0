/**
 * Delivering a store template: the version a caller may receive (the one they bought, or the
 * current one of their own template), as a zip or installed into a project.
 */
import type { ZipEntryInput } from "../archive/zipWriter.ts";
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";
import { forbidden, notFound } from "../errors.ts";
import { templateInput } from "../templates/input.ts";
import { insertTemplate } from "../templates/write.ts";
import { templateZipEntries } from "../templates/zipExport.ts";
import { findPurchase } from "./purchases.ts";
import { findVersion, type FrozenTemplate, type VersionRow } from "./versions.ts";

/**
 * The version `userId` may receive of a store template: the one they bought (even when the
 * template was withdrawn since), or the latest of their own.
 * @throws 404 when the template does not exist or is hidden from them, 403 when they did not buy it
 */
export async function deliverableVersion(conn: CommonQueryMethods, storeTemplateId: number, userId: number): Promise<{ name: string; version: VersionRow }> {
  const template = await conn.maybeOne(sql.type(z.object({ name: z.string(), seller_id: z.number().nullable(), status: z.string() }))`
    select name, seller_id, status from store_templates where id = ${storeTemplateId}`);
  if (!template) throw notFound("Store template");
  const bought = await findPurchase(conn, userId, storeTemplateId);
  if (bought) return { name: template.name, version: (await findVersion(conn, bought.version_id))! };
  if (template.seller_id === userId) {
    const latest = await conn.maybeOne(sql.type(z.object({ id: z.number() }))`
      select id from store_template_versions where store_template_id = ${storeTemplateId} order by version desc limit 1`);
    if (!latest) throw notFound("Published version");
    return { name: template.name, version: (await findVersion(conn, latest.id))! };
  }
  if (template.status !== "published") throw notFound("Store template");
  throw forbidden("Buy this template to download or install it.");
}

/** Folder of the `index`-th template inside a package zip. */
const folderOf = (template: FrozenTemplate, index: number) =>
  `${String(index + 1).padStart(2, "0")}-${template.name.normalize("NFKD").replace(/[^\w.-]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 60) || "template"}/`;

/** The zip entries of a version: one folder per template, each in the template zip layout (template.json, files/). */
export function versionZipEntries(version: VersionRow): ZipEntryInput[] {
  return version.content.flatMap((template, index) => {
    const full = {
      ...template,
      id: 0,
      project_id: null,
      owner_id: null,
      user_id: null,
      created_at: version.created_at,
      updated_at: version.created_at,
      variables: template.variables.map((v, position) => ({
        ...v,
        id: 0,
        template_id: 0,
        type: v.type as never,
        position: v.position ?? position,
        created_at: version.created_at,
        updated_at: version.created_at,
      })),
      files: template.files.map((f) => ({ ...f, id: 0, template_id: 0, created_at: version.created_at, updated_at: version.created_at })),
    };
    return templateZipEntries(full).map((entry) => ({ ...entry, path: `${folderOf(template, index)}${entry.path}` }));
  });
}

/** Copies every template of a version into project `projectId`; returns the new template ids in order. */
export async function installVersion(tx: CommonQueryMethods, version: VersionRow, projectId: number, userId: number): Promise<number[]> {
  const ids: number[] = [];
  for (const template of version.content) {
    const input = templateInput.parse({
      name: template.name,
      description: template.description,
      content: template.content,
      engine_type: template.engine_type,
      variables: template.variables,
      files: template.files,
    });
    ids.push(await insertTemplate(tx, { projectId }, userId, input));
  }
  return ids;
}
