/**
 * Project policy (one function per action). Access comes from ownership or from a team
 * attached to the project: team owners and admins administer it, members contribute to
 * its content, viewers read. Site admins and super admins see every project; only super
 * admins may also act on them. Only the owner deletes a project.
 *
 * `is_public` grants nothing here: it only lists the project in the public gallery
 * (`GET /projects?public=true`). Reading the project itself, or anything inside it, needs
 * the access above (spec: "caller must be owner or team member"); a stranger gets 404.
 */
import type { ProjectRow } from "../../shared/db/projects.ts";
import type { UserRow } from "../../shared/db/users.ts";
import { hasRole, isSiteAdmin } from "./roles.ts";

type Project = Pick<ProjectRow, "access" | "owner_id">;

/** The project and everything in it: its owner, members of its teams (any role), site admins. */
export const canViewProject = (user: UserRow, project: Project) => project.access !== null || isSiteAdmin(user);

/** Settings, lock/unlock, archive, join code, attaching teams. */
export const canManageProject = (user: UserRow, project: Project) =>
  project.access === "owner" || project.access === "admin" || hasRole(user, "super_admin");

/** What lives inside a project: schemas, templates, generations, boards. */
export const canEditProjectContent = (user: UserRow, project: Project) =>
  canManageProject(user, project) || project.access === "member";

export const canDeleteProject = (user: UserRow, project: Project) => project.owner_id === user.id;

/** The join code is a secret of the people who manage the project. */
export const canSeeJoinCode = canManageProject;
