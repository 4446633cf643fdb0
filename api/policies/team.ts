/**
 * Team policy. Team owners and admins manage the team (details, members, projects);
 * only the owner appoints or removes admins and deletes the team; every member sees it.
 * Site admins see every team; super admins may also manage them.
 */
import type { TeamRow, TeamRoleName } from "../../shared/db/teams.ts";
import type { UserRow } from "../../shared/db/users.ts";
import { hasRole, isSiteAdmin } from "./roles.ts";

type Team = Pick<TeamRow, "role" | "owner_id">;

export const canViewTeam = (user: UserRow, team: Team) => team.role !== null || isSiteAdmin(user);

export const canManageTeam = (user: UserRow, team: Team) => team.role === "owner" || team.role === "admin" || hasRole(user, "super_admin");

export const canDeleteTeam = (user: UserRow, team: Team) => team.owner_id === user.id || hasRole(user, "super_admin");

/** Whether the caller may give (or take away) `role` in this team. */
export function canAssignTeamRole(user: UserRow, team: Team, role: TeamRoleName): boolean {
  if (role === "owner") return false;
  if (role === "admin") return team.role === "owner" || hasRole(user, "super_admin");
  return canManageTeam(user, team);
}
