/**
 * Team and team-member resources (spec "Team").
 */
import { z } from "zod";
import type { MemberRow, TeamRow } from "../../shared/db/teams.ts";

/** The spec's Team resource, plus the caller's role in the team and when it was created. */
export const teamResource = z.object({
  id: z.number(),
  name: z.string(),
  description: z.string(),
  owner_id: z.number(),
  members_count: z.number(),
  projects_count: z.number(),
  role: z.string().nullable(),
  created_at: z.string(),
});
export type TeamResource = z.infer<typeof teamResource>;

/** A team as the spec's Team resource, plus the caller's role in it. */
export const presentTeam = (row: TeamRow): TeamResource => ({
  id: row.id,
  name: row.name,
  description: row.description,
  owner_id: row.owner_id,
  members_count: row.members_count,
  projects_count: row.projects_count,
  role: row.role,
  created_at: row.created_at.toISOString(),
});

export const memberResource = z.object({
  id: z.number(),
  user: z.object({ id: z.number(), name: z.string(), email: z.string() }),
  role: z.object({ id: z.number(), name: z.string() }),
  joined_at: z.string(),
});

/** A team member with their user and role. */
export const presentMember = (row: MemberRow) => ({
  id: row.id,
  user: { id: row.user_id, name: row.user_name, email: row.user_email },
  role: { id: row.role_id, name: row.role_name },
  joined_at: row.joined_at.toISOString(),
});
