/**
 * Code adjustments in the database, and the per-file results of the apply that wrote a
 * generation. An adjustment is keyed by its project, the template or generator that produced
 * the file (exactly one of them) and the file's path.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";

export const adjustmentRow = z.object({
  id: z.number(),
  project_id: z.number(),
  template_id: z.number().nullable(),
  generator_id: z.number().nullable(),
  file_path: z.string(),
  base_generation_id: z.number().nullable(),
  base_content: z.string(),
  adjusted_content: z.string(),
  diff: z.string(),
  additions: z.number(),
  deletions: z.number(),
  is_active: z.boolean(),
  user_id: z.number().nullable(),
  created_at: z.date(),
  updated_at: z.date(),
});
export type AdjustmentRow = z.infer<typeof adjustmentRow>;

const columns = sql.fragment`id, project_id, template_id, generator_id, file_path, base_generation_id, base_content, adjusted_content,
  diff, additions, deletions, is_active, user_id, created_at, updated_at`;

/** What produced a generation's files: its template or its generator. */
export type AdjustmentSource = { templateId: number; generatorId: null } | { templateId: null; generatorId: number };

const sourceFilter = (source: AdjustmentSource) =>
  source.templateId !== null ? sql.fragment`template_id = ${source.templateId}` : sql.fragment`generator_id = ${source.generatorId}`;

/** The adjustments of a source, in the order they are applied (id order); `activeOnly` skips paused ones. */
export async function listAdjustments(conn: CommonQueryMethods, projectId: number, source: AdjustmentSource, activeOnly = false): Promise<readonly AdjustmentRow[]> {
  return conn.any(sql.type(adjustmentRow)`
    select ${columns} from code_adjustments
    where project_id = ${projectId} and ${sourceFilter(source)} ${activeOnly ? sql.fragment`and is_active` : sql.fragment``}
    order by id`);
}

/** One adjustment, or null; `lock` row-locks it. */
export async function findAdjustment(conn: CommonQueryMethods, id: number, lock = false): Promise<AdjustmentRow | null> {
  return conn.maybeOne(sql.type(adjustmentRow)`select ${columns} from code_adjustments where id = ${id} ${lock ? sql.fragment`for update` : sql.fragment``}`);
}

/** The fields of a new adjustment. */
export interface NewAdjustment {
  projectId: number;
  source: AdjustmentSource;
  filePath: string;
  baseGenerationId: number;
  baseContent: string;
  adjustedContent: string;
  diff: string;
  additions: number;
  deletions: number;
  userId: number;
}

/** Inserts an adjustment. */
export async function insertAdjustment(tx: CommonQueryMethods, input: NewAdjustment): Promise<AdjustmentRow> {
  return tx.one(sql.type(adjustmentRow)`
    insert into code_adjustments (project_id, template_id, generator_id, file_path, base_generation_id, base_content, adjusted_content, diff, additions, deletions, user_id)
    values (${input.projectId}, ${input.source.templateId}, ${input.source.generatorId}, ${input.filePath}, ${input.baseGenerationId},
      ${input.baseContent}, ${input.adjustedContent}, ${input.diff}, ${input.additions}, ${input.deletions}, ${input.userId})
    returning ${columns}`);
}

/** Changes an adjustment's edit (same base) and/or whether it is active. */
export async function updateAdjustment(
  tx: CommonQueryMethods,
  id: number,
  change: { edit?: { adjustedContent: string; diff: string; additions: number; deletions: number }; isActive?: boolean },
): Promise<AdjustmentRow> {
  const edit = change.edit;
  return tx.one(sql.type(adjustmentRow)`
    update code_adjustments set
      adjusted_content = coalesce(${edit?.adjustedContent ?? null}, adjusted_content),
      diff = coalesce(${edit?.diff ?? null}, diff),
      additions = coalesce(${edit?.additions ?? null}, additions),
      deletions = coalesce(${edit?.deletions ?? null}, deletions),
      is_active = coalesce(${change.isActive ?? null}, is_active),
      updated_at = now()
    where id = ${id}
    returning ${columns}`);
}

/** Deletes an adjustment. */
export async function deleteAdjustment(tx: CommonQueryMethods, id: number): Promise<void> {
  await tx.query(sql.type(z.object({}))`delete from code_adjustments where id = ${id}`);
}

export const applyStatuses = ["applied", "already_present", "conflict", "file_missing"] as const;
export type ApplyStatus = (typeof applyStatuses)[number];

export const applyResultRow = z.object({
  adjustment_id: z.number().nullable(),
  file_path: z.string(),
  status: z.enum(applyStatuses),
  conflicts: z.number(),
});
export type ApplyResultRow = z.infer<typeof applyResultRow>;

/** The per-adjustment results recorded with a generation written by an apply, in order. */
export async function listApplyResults(conn: CommonQueryMethods, generationId: number): Promise<readonly ApplyResultRow[]> {
  return conn.any(sql.type(applyResultRow)`
    select adjustment_id, file_path, status, conflicts from code_generation_adjustments
    where code_generation_id = ${generationId} order by position`);
}

/** Records the results of an apply with the generation it wrote. */
export async function insertApplyResults(tx: CommonQueryMethods, generationId: number, results: readonly ApplyResultRow[]): Promise<void> {
  if (results.length === 0) return;
  await tx.query(sql.type(z.object({}))`
    insert into code_generation_adjustments (code_generation_id, position, adjustment_id, file_path, status, conflicts)
    select ${generationId}, u.position - 1, u.adjustment_id, u.file_path, u.status, u.conflicts
    from unnest(${sql.array(results.map((r) => r.adjustment_id), "int8")}, ${sql.array(results.map((r) => r.file_path), "text")},
      ${sql.array(results.map((r) => r.status), "text")}, ${sql.array(results.map((r) => r.conflicts), "int4")})
      with ordinality as u(adjustment_id, file_path, status, conflicts, position)`);
}
