/**
 * Presenting projects with their counts and teams, for the project routes.
 */
import { sql, type CommonQueryMethods } from "../../../shared/db/pool.ts";
import { findProject, projectCounts, type ProjectRow } from "../../../shared/db/projects.ts";
import { teamColumns, teamRow } from "../../../shared/db/teams.ts";
import type { UserRow } from "../../../shared/db/users.ts";
import { presentProject, type ProjectResource } from "../../presenters/project.ts";
import { presentTeam } from "../../presenters/team.ts";

/** A project resource with counts and its teams as full Team resources (single read). */
export async function presentProjectWithTeams(conn: CommonQueryMethods, user: UserRow, row: ProjectRow): Promise<ProjectResource> {
  const [counts, teams] = await Promise.all([
    projectCounts(conn, [row.id]),
    conn.any(sql.type(teamRow)`
      select ${teamColumns(user.id)} from teams t join team_projects tp on tp.team_id = t.id
      where tp.project_id = ${row.id} order by t.name, t.id`),
  ]);
  return presentProject(user, row, counts.get(row.id)!, teams.map(presentTeam));
}

/** Re-reads a project after a change and presents it. */
export async function reloadProject(conn: CommonQueryMethods, user: UserRow, id: number): Promise<ProjectResource> {
  const row = await findProject(conn, id, user.id);
  if (!row) throw new Error(`project ${id} vanished`);
  return presentProjectWithTeams(conn, user, row);
}
