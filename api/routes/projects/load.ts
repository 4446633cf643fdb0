/**
 * Presenting projects with their counts and teams, for the project routes.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../../../shared/db/pool.ts";
import { findProject, projectCounts, type ProjectRow } from "../../../shared/db/projects.ts";
import type { UserRow } from "../../../shared/db/users.ts";
import { presentProject, type ProjectResource } from "../../presenters/project.ts";

const teamRow = z.object({ id: z.number(), name: z.string(), description: z.string() });

/** A project resource with counts and teams (single read). */
export async function presentProjectWithTeams(conn: CommonQueryMethods, user: UserRow, row: ProjectRow): Promise<ProjectResource> {
  const [counts, teams] = await Promise.all([
    projectCounts(conn, [row.id]),
    conn.any(sql.type(teamRow)`
      select t.id, t.name, t.description from teams t join team_projects tp on tp.team_id = t.id
      where tp.project_id = ${row.id} order by t.name, t.id`),
  ]);
  return presentProject(user, row, counts.get(row.id)!, [...teams]);
}

/** Re-reads a project after a change and presents it. */
export async function reloadProject(conn: CommonQueryMethods, user: UserRow, id: number): Promise<ProjectResource> {
  const row = await findProject(conn, id, user.id);
  if (!row) throw new Error(`project ${id} vanished`);
  return presentProjectWithTeams(conn, user, row);
}
