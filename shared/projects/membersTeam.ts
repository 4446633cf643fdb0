/**
 * The team people join a project into with its join code: one per project
 * (`teams.join_project_id`), owned by the project's owner, attached to the project,
 * created on the first join.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";

export async function projectMembersTeam(tx: CommonQueryMethods, project: { id: number; owner_id: number; name: string }): Promise<number> {
  const existing = await tx.maybeOneFirst(sql.type(z.object({ id: z.number() }))`select id from teams where join_project_id = ${project.id}`);
  if (existing) return existing;
  const teamId = await tx.oneFirst(sql.type(z.object({ id: z.number() }))`
    insert into teams (owner_id, name, description, join_project_id)
    values (${project.owner_id}, ${`${project.name} members`.slice(0, 255)}, 'People who joined with the project''s join code.', ${project.id})
    returning id`);
  await tx.query(sql.type(z.object({}))`insert into team_members (team_id, user_id, role_id) values (${teamId}, ${project.owner_id}, 1)`);
  await tx.query(sql.type(z.object({}))`insert into team_projects (team_id, project_id) values (${teamId}, ${project.id})`);
  return teamId;
}
