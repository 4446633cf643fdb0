/**
 * Project policy (one function per action). Access comes from ownership or from a team
 * attached to the project: team owners and admins administer it, members contribute to
 * its content, viewers read. Site admins and super admins see every project; only super
 * admins may also act on them. Only the owner deletes a project.
 */
import type { ProjectRow } from "../../shared/db/projects.ts";
import type { UserRow } from "../../shared/db/users.ts";
import { hasRole, isSiteAdmin } from "./roles.ts";

type Project = Pick<ProjectRow, "access" | "is_public" | "owner_id">;

export const canViewProject = (user: UserRow, project: Project) => project.access !== null || project.is_public || isSiteAdmin(user);

/** Settings, lock/unlock, archive, join code, attaching teams. */
export const canManageProject = (user: UserRow, project: Project) =>
  project.access === "owner" || project.access === "admin" || hasRole(user, "super_admin");

/** What lives inside a project: schemas, templates, generations, boards. */
export const canEditProjectContent = (user: UserRow, project: Project) =>
  canManageProject(user, project) || project.access === "member";

export const canDeleteProject = (user: UserRow, project: Project) => project.owner_id === user.id;

/** The join code is a secret of the people who manage the project. */
export const canSeeJoinCode = canManageProject;
