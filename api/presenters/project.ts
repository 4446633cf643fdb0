/**
 * The Project resource (spec "Project"), with counts, subscription state and, in a single
 * read, its teams (each a full Team resource). The join code is shown only to those who
 * manage the project.
 */
import { z } from "zod";
import { subscriptionExpired, type ProjectCounts, type ProjectRow } from "../../shared/db/projects.ts";
import type { UserRow } from "../../shared/db/users.ts";
import { canSeeJoinCode } from "../policies/project.ts";
import { teamResource, type TeamResource } from "./team.ts";

export const projectSubscription = z.object({ expires_at: z.string(), is_expired: z.boolean(), days_remaining: z.number() }).nullable();

export const projectResource = z.object({
  id: z.number(),
  name: z.string(),
  description: z.string(),
  owner_id: z.number(),
  owner: z.object({ id: z.number(), name: z.string(), username: z.string() }),
  is_public: z.boolean(),
  is_locked: z.boolean(),
  is_archived: z.boolean(),
  allow_join_requests: z.boolean(),
  join_code: z.string().nullable(),
  form_designer_snap_to_grid: z.boolean(),
  form_designer_grid_size: z.number(),
  access: z.enum(["owner", "admin", "member", "viewer"]).nullable(),
  subscription: projectSubscription,
  teams_count: z.number(),
  schemas_count: z.number(),
  templates_count: z.number(),
  forms_count: z.number(),
  reports_count: z.number(),
  kanban_boards_count: z.number(),
  teams: z.array(teamResource).optional(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type ProjectResource = z.infer<typeof projectResource>;

const DAY_MS = 86_400_000;

export function presentSubscriptionState(expiresAt: Date | null) {
  if (!expiresAt) return null;
  const remaining = expiresAt.getTime() - Date.now();
  return {
    expires_at: expiresAt.toISOString(),
    is_expired: subscriptionExpired({ subscription_expires_at: expiresAt }),
    days_remaining: Math.max(0, Math.ceil(remaining / DAY_MS)),
  };
}

export function presentProject(
  user: UserRow,
  row: ProjectRow,
  counts: ProjectCounts,
  teams?: TeamResource[],
): ProjectResource {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    owner_id: row.owner_id,
    owner: { id: row.owner_id, name: row.owner_name, username: row.owner_username },
    is_public: row.is_public,
    is_locked: row.is_locked,
    is_archived: row.archived_at !== null,
    allow_join_requests: row.allow_join_requests,
    join_code: canSeeJoinCode(user, row) ? row.join_code : null,
    form_designer_snap_to_grid: row.form_designer_snap_to_grid,
    form_designer_grid_size: row.form_designer_grid_size,
    access: row.access,
    subscription: presentSubscriptionState(row.subscription_expires_at),
    ...counts,
    ...(teams ? { teams } : {}),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
