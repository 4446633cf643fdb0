/**
 * Queries on teams, their members and roles.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "./pool.ts";

export const teamRoleNames = ["owner", "admin", "member", "viewer"] as const;
export type TeamRoleName = (typeof teamRoleNames)[number];
export const TEAM_ROLE = { owner: 1, admin: 2, member: 3, viewer: 4 } as const;

export const teamRow = z.object({
  id: z.number(),
  owner_id: z.number(),
  name: z.string(),
  description: z.string(),
  members_count: z.number(),
  projects_count: z.number(),
  created_at: z.date(),
  role: z.enum(teamRoleNames).nullable(),
});
export type TeamRow = z.infer<typeof teamRow>;

export const teamColumns = (userId: number) => sql.fragment`
  t.id, t.owner_id, t.name, t.description, t.created_at,
  (select count(*)::int from team_members m where m.team_id = t.id) as members_count,
  (select count(*)::int from team_projects tp join projects p on p.id = tp.project_id where tp.team_id = t.id and p.deleted_at is null) as projects_count,
  (select r.name from team_members m join team_roles r on r.id = m.role_id where m.team_id = t.id and m.user_id = ${userId}) as role`;

export async function findTeam(conn: CommonQueryMethods, id: number, userId: number, lock = false): Promise<TeamRow | null> {
  return conn.maybeOne(sql.type(teamRow)`
    select ${teamColumns(userId)} from teams t where t.id = ${id} ${lock ? sql.fragment`for update of t` : sql.fragment``}`);
}

export const memberRow = z.object({
  id: z.number(),
  user_id: z.number(),
  user_name: z.string(),
  user_email: z.string(),
  role_id: z.number(),
  role_name: z.enum(teamRoleNames),
  joined_at: z.date(),
});
export type MemberRow = z.infer<typeof memberRow>;

const memberColumns = sql.fragment`m.id, m.user_id, u.name as user_name, u.email as user_email, m.role_id, r.name as role_name, m.joined_at`;

export async function listMembers(conn: CommonQueryMethods, teamId: number): Promise<readonly MemberRow[]> {
  return conn.any(sql.type(memberRow)`
    select ${memberColumns} from team_members m join users u on u.id = m.user_id join team_roles r on r.id = m.role_id
    where m.team_id = ${teamId} order by m.role_id, u.name, m.id`);
}

export async function findMember(conn: CommonQueryMethods, teamId: number, userId: number): Promise<MemberRow | null> {
  return conn.maybeOne(sql.type(memberRow)`
    select ${memberColumns} from team_members m join users u on u.id = m.user_id join team_roles r on r.id = m.role_id
    where m.team_id = ${teamId} and m.user_id = ${userId}`);
}
