import { z } from "zod";
import { jobStatuses } from "../../../shared/jobs/records.ts";
import { paginationQuery } from "../../pagination.ts";

export const idParams = z.object({ id: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER) });

export const listJobsQuery = paginationQuery.extend({
  status: z.enum(jobStatuses).optional(),
  kind: z.string().regex(/^[a-z0-9_]+__[a-z0-9_]+$/).optional(),
});

export const jobResource = z.object({
  id: z.number(),
  kind: z.string(),
  status: z.enum(jobStatuses),
  progress: z.number(),
  progress_message: z.string().nullable(),
  result: z.unknown(),
  error: z.string().nullable(),
  error_code: z.string().nullable(),
  errors: z.record(z.string(), z.array(z.string())).nullable(),
  attempts: z.number(),
  max_attempts: z.number(),
  project_id: z.number().nullable(),
  created_at: z.string(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
});
