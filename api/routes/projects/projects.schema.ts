import { z } from "zod";
import { paginationQuery } from "../../pagination.ts";

export const projectParams = z.object({ projectId: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER) });

const booleanQuery = z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1");

export const listProjectsQuery = paginationQuery.extend({
  public: booleanQuery.optional(),
  archived: booleanQuery.optional(),
  q: z.string().trim().max(255).optional(),
});

const name = z.string().trim().min(1).max(255);
const description = z.string().max(5000);
export const joinCode = z.string().regex(/^[A-Za-z0-9_-]{6,32}$/, { error: "The join code must be 6-32 letters, digits, dashes or underscores." });

export const createProjectBody = z.object({
  name,
  description: description.optional(),
  is_public: z.boolean().optional(),
  allow_join_requests: z.boolean().optional(),
  form_designer_snap_to_grid: z.boolean().optional(),
  form_designer_grid_size: z.number().int().min(1).max(200).optional(),
});

export const updateProjectBody = z
  .object({
    name: name.optional(),
    description: description.optional(),
    is_public: z.boolean().optional(),
    allow_join_requests: z.boolean().optional(),
    join_code: joinCode.nullable().optional(),
    form_designer_snap_to_grid: z.boolean().optional(),
    form_designer_grid_size: z.number().int().min(1).max(200).optional(),
  })
  .refine((v) => Object.keys(v).length > 0, { message: "Send at least one field to change." });

export const joinBody = z.object({ join_code: joinCode });
