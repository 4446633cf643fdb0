/**
 * Request schemas of the generator routes.
 */
import { z } from "zod";
import { generatorStatuses } from "../../../shared/generators/store.ts";
import { templateDescription, templateName } from "../../../shared/templates/input.ts";
import { paginationQuery } from "../../pagination.ts";
import { idNumber } from "../../../shared/canonicalNumbers.ts";

const id = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);

const templateIds = z
  .array(id)
  .max(100)
  .refine((ids) => new Set(ids).size === ids.length, { message: "A template may appear only once." });

export const createGeneratorBody = z.object({
  project_id: id,
  name: templateName,
  description: templateDescription.default(""),
  team_id: id.nullable().default(null),
  schema_id: id.nullable().default(null),
  template_ids: templateIds.default([]),
  values: z.record(z.string().max(64), z.json()).default({}),
  status: z.enum(["Draft", "Published"]).default("Draft"),
  /** Every run applies the generator's active code adjustments and answers the adjusted generation. */
  apply_adjustments: z.boolean().default(false),
});

export const updateGeneratorBody = z
  .object({
    name: templateName.optional(),
    description: templateDescription.optional(),
    team_id: id.nullable().optional(),
    schema_id: id.nullable().optional(),
    template_ids: templateIds.optional(),
    values: z.record(z.string().max(64), z.json()).optional(),
    status: z.enum(generatorStatuses).optional(),
    apply_adjustments: z.boolean().optional(),
  })
  .refine((v) => Object.keys(v).length > 0, { message: "Send at least one field to change." });

export const listGeneratorsQuery = paginationQuery.extend({
  project_id: idNumber().optional(),
  status: z.enum(generatorStatuses).optional(),
});
