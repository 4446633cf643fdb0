/**
 * Loading a project for a route, with the statuses the spec fixes: a project the caller
 * may not see is 404; one they see but may not change is 403; a locked project refuses
 * every change to itself and its content with 423, one whose subscription expired with
 * 402 (the soft lock), an archived one with 409.
 *
 * Writes lock the project row: FOR UPDATE for changes to the project itself (so a lock
 * and an update serialise) and FOR SHARE for changes to its content (so content changes
 * run concurrently but never alongside a lock). Call the write guards inside a transaction.
 */
import { findProject, type ProjectRow } from "../../shared/db/projects.ts";
import type { CommonQueryMethods } from "../../shared/db/pool.ts";
import type { UserRow } from "../../shared/db/users.ts";
import { forbidden, notFound } from "../../shared/errors.ts";
import { projectStateError, type StateExemptions } from "../../shared/projects/writable.ts";
import { canDeleteProject, canEditProjectContent, canManageProject, canViewProject } from "./project.ts";

// Jobs re-check the same states when they write content (shared/projects/writable.ts).
export { projectArchived, projectLocked, subscriptionExpiredError } from "../../shared/projects/writable.ts";

export type ProjectAction = "manage" | "content" | "delete";

/** States the action may run in anyway: locked (unlock), expired (renewing, unlocking, deleting), archived (unarchive, delete). */
export type WriteOptions = StateExemptions;

/** The project if the caller may see it. @throws 404 */
export async function projectForRead(conn: CommonQueryMethods, id: number, user: UserRow): Promise<ProjectRow> {
  const project = await findProject(conn, id, user.id);
  if (!project || !canViewProject(user, project)) throw notFound("Project");
  return project;
}

const allowed: Record<ProjectAction, (user: UserRow, project: ProjectRow) => boolean> = {
  manage: canManageProject,
  content: canEditProjectContent,
  delete: canDeleteProject,
};

/** The project, row-locked, if the caller may do `action` to it now. @throws 404, 403, 423, 402, 409 */
export async function projectForWrite(
  tx: CommonQueryMethods,
  id: number,
  user: UserRow,
  action: ProjectAction,
  options: WriteOptions = {},
): Promise<ProjectRow> {
  const project = await findProject(tx, id, user.id, action === "content" ? "share" : "update");
  if (!project || !canViewProject(user, project)) throw notFound("Project");
  if (!allowed[action](user, project)) {
    throw forbidden(action === "delete" ? "Only the project's owner may delete it." : "You may not change this project.");
  }
  const refusal = projectStateError(project, options);
  if (refusal) throw refusal;
  return project;
}
