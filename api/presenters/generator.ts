/**
 * The generator resource: owner, team, project, status, schema, values and its ordered
 * templates (spec: a generator has a user_id, a team_id and a status).
 */
import { z } from "zod";
import { generatorStatuses, type GeneratorRow } from "../../shared/generators/store.ts";

export const generatorResource = z.object({
  id: z.number(),
  user_id: z.number(),
  owner: z.object({ id: z.number(), name: z.string(), username: z.string() }),
  team_id: z.number().nullable(),
  project_id: z.number(),
  name: z.string(),
  description: z.string(),
  status: z.enum(generatorStatuses),
  schema_id: z.number().nullable(),
  values: z.record(z.string(), z.unknown()),
  /** Every run applies the generator's active code adjustments. */
  apply_adjustments: z.boolean(),
  template_ids: z.array(z.number()),
  templates: z.array(z.object({ id: z.number(), name: z.string() })),
  created_at: z.string(),
  updated_at: z.string(),
});

/** A generator. */
export function presentGenerator(row: GeneratorRow): z.infer<typeof generatorResource> {
  return {
    id: row.id,
    user_id: row.user_id,
    owner: { id: row.user_id, name: row.owner_name, username: row.owner_username },
    team_id: row.team_id,
    project_id: row.project_id,
    name: row.name,
    description: row.description,
    status: row.status,
    schema_id: row.schema_id,
    values: row.values,
    apply_adjustments: row.apply_adjustments,
    template_ids: row.templates.map((t) => t.id),
    templates: row.templates,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
