/**
 * Creating a project: the project row and a subscription to the default plan (with that
 * plan's credits), in the caller's transaction.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";

export interface NewProject {
  ownerId: number;
  name: string;
  description?: string;
  isPublic?: boolean;
  allowJoinRequests?: boolean;
  formDesignerSnapToGrid?: boolean;
  formDesignerGridSize?: number;
}

/** Inserts the project and its first subscription; returns the project id. */
export async function createProject(tx: CommonQueryMethods, input: NewProject): Promise<number> {
  const id = await tx.oneFirst(sql.type(z.object({ id: z.number() }))`
    insert into projects (owner_id, name, description, is_public, allow_join_requests, form_designer_snap_to_grid, form_designer_grid_size)
    values (${input.ownerId}, ${input.name}, ${input.description ?? ""}, ${input.isPublic ?? false}, ${input.allowJoinRequests ?? false},
      ${input.formDesignerSnapToGrid ?? true}, ${input.formDesignerGridSize ?? 10})
    returning id`);
  await tx.query(sql.type(z.object({}))`
    insert into subscriptions (project_id, plan_id, expires_at, credits_allocated)
    select ${id}, id, now() + make_interval(days => duration_days), credits from plans where is_default`);
  return id;
}
