/**
 * Loading a template for a route under /projects/{projectId}/templates/{templateId}, with
 * the project's policy: reads need a visible project, changes need the right to edit its
 * content. Inside a project path a template is one of the project's, or (for reads and
 * runs) one of the caller's own top-level templates.
 */
import type { CommonQueryMethods } from "../../../shared/db/pool.ts";
import type { ProjectRow } from "../../../shared/db/projects.ts";
import type { UserRow } from "../../../shared/db/users.ts";
import { forbidden, notFound } from "../../../shared/errors.ts";
import { findTemplateInProject, lockTemplate, type TemplateRow } from "../../../shared/templates/store.ts";
import { projectForRead, projectForWrite } from "../../policies/projectGuard.ts";

export interface Loaded {
  project: ProjectRow;
  template: TemplateRow;
}

/** A template the caller may read in the project (theirs at the top level included). @throws 404 */
export async function templateForRead(conn: CommonQueryMethods, projectId: number, templateId: number, user: UserRow): Promise<Loaded> {
  const project = await projectForRead(conn, projectId, user);
  const template = await findTemplateInProject(conn, project.id, templateId, user.id, true);
  if (!template) throw notFound("Template");
  return { project, template };
}

/**
 * A template the caller may use to change the project's content (run it, save values):
 * the project's own or the caller's top-level one. @throws 404, 403, 423, 402, 409
 */
export async function templateForProjectWrite(tx: CommonQueryMethods, projectId: number, templateId: number, user: UserRow): Promise<Loaded> {
  const project = await projectForWrite(tx, projectId, user, "content");
  const template = await findTemplateInProject(tx, project.id, templateId, user.id, true);
  if (!template) throw notFound("Template");
  return { project, template };
}

/** A project template the caller may edit, row-locked. @throws 404, 403, 423, 402, 409 */
export async function templateForEdit(tx: CommonQueryMethods, projectId: number, templateId: number, user: UserRow): Promise<Loaded> {
  const loaded = await templateForProjectWrite(tx, projectId, templateId, user);
  if (loaded.template.project_id === null) {
    throw forbidden(`Template ${templateId} is one of your top-level templates; change it through /api/templates/${templateId}.`);
  }
  await lockTemplate(tx, templateId);
  return loaded;
}
