/**
 * The code adjustment resource: which file of which template or generator it changes, the
 * generation it was made on, the unified diff and the file as adjusted, and whether it is
 * applied (`is_active`); and the per-file results of an apply.
 */
import { z } from "zod";
import { resultSummary } from "../../shared/adjustments/apply.ts";
import { applyStatuses, type AdjustmentRow, type ApplyResultRow } from "../../shared/adjustments/store.ts";

export const adjustmentResource = z.object({
  id: z.number(),
  project_id: z.number(),
  template_id: z.number().nullable(),
  generator_id: z.number().nullable(),
  file_path: z.string(),
  base_generation_id: z.number().nullable(),
  /** Unified diff from the generated file to the adjusted one. */
  diff: z.string(),
  /** The file as adjusted. */
  content: z.string(),
  additions: z.number(),
  deletions: z.number(),
  is_active: z.boolean(),
  user_id: z.number().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

/** An adjustment. */
export function presentAdjustment(row: AdjustmentRow): z.infer<typeof adjustmentResource> {
  return {
    id: row.id,
    project_id: row.project_id,
    template_id: row.template_id,
    generator_id: row.generator_id,
    file_path: row.file_path,
    base_generation_id: row.base_generation_id,
    diff: row.diff,
    content: row.adjusted_content,
    additions: row.additions,
    deletions: row.deletions,
    is_active: row.is_active,
    user_id: row.user_id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export const applyFileResource = z.object({
  file_path: z.string(),
  status: z.enum(applyStatuses),
  adjustment_id: z.number().nullable(),
  /** Conflict blocks (`<<<<<<<` … `>>>>>>>`) in the file; 0 unless `status` is `conflict`. */
  conflicts: z.number(),
});

/** The answer of an apply. */
export const applyResultResource = z.object({
  message: z.string(),
  /** The generation written, holding the merged files. */
  code_generation_id: z.number(),
  /** The generation it started from (unchanged). */
  adjusted_from_id: z.number(),
  files: z.array(applyFileResource),
  /** Paths whose files carry conflict markers. */
  conflicts: z.array(z.string()),
});

/** Per-file results as the API answers them. */
export const presentApplyResults = (rows: readonly ApplyResultRow[]) => resultSummary(rows);
