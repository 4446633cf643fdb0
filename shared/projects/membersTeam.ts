/**
 * The team people join a project into with its join code: one per project
 * (`teams.join_project_id`), owned by the project's owner, attached to the project,
 * created on the first join. Its managers may stop sharing the project with it like with
 * any team; it then stays an ordinary team of its members, and the next join starts a new
 * join team (joining into the detached one gave no access, and attaching it again would
 * bring back everyone who was sent away).
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";

export async function projectMembersTeam(tx: CommonQueryMethods, project: { id: number; owner_id: number; name: string }): Promise<number> {
  const existing = await tx.maybeOne(sql.type(z.object({ id: z.number(), attached: z.boolean() }))`
    select t.id, exists (select 1 from team_projects tp where tp.team_id = t.id and tp.project_id = ${project.id}) as attached
    from teams t where t.join_project_id = ${project.id} for update of t`);
  if (existing?.attached) return existing.id;
  if (existing) await tx.query(sql.type(z.object({}))`update teams set join_project_id = null where id = ${existing.id}`);
  const teamId = await tx.oneFirst(sql.type(z.object({ id: z.number() }))`
    insert into teams (owner_id, name, description, join_project_id)
    values (${project.owner_id}, ${`${project.name} members`.slice(0, 255)}, 'People who joined with the project''s join code.', ${project.id})
    returning id`);
  await tx.query(sql.type(z.object({}))`insert into team_members (team_id, user_id, role_id) values (${teamId}, ${project.owner_id}, 1)`);
  await tx.query(sql.type(z.object({}))`insert into team_projects (team_id, project_id) values (${teamId}, ${project.id})`);
  return teamId;
}
