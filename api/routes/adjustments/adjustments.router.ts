/**
 * Code adjustments (DESIGN §11, §14): a user's edits to generated files, kept per template
 * or generator and file path, and re-applied to later generations by a three-way merge
 * (`POST /code-generations/{id}/apply-adjustments`, the `adjustments__apply` job, awaited),
 * which writes a new generation and never changes the one it starts from.
 *
 * Reads need to see the project; everything else the right to edit its content.
 */
import { z } from "zod";
import { sourceOf } from "../../../shared/adjustments/apply.ts";
import { editOf, generatedText } from "../../../shared/adjustments/edit.ts";
import { deleteAdjustment, findAdjustment, insertAdjustment, listAdjustments, updateAdjustment, type AdjustmentRow } from "../../../shared/adjustments/store.ts";
import type { CommonQueryMethods } from "../../../shared/db/pool.ts";
import type { UserRow } from "../../../shared/db/users.ts";
import { invalid, notFound } from "../../../shared/errors.ts";
import { enqueue } from "../../../shared/jobs/enqueue.ts";
import { adjustmentsApply } from "../../../shared/jobs/kinds.ts";
import { currentUser } from "../../context.ts";
import { acceptedResponse, respondWithJob } from "../../jobResponse.ts";
import { projectForRead, projectForWrite } from "../../policies/projectGuard.ts";
import { adjustmentResource, applyResultResource, presentAdjustment, presentApplyResults } from "../../presenters/adjustment.ts";
import type { GenerationRow } from "../../presenters/generation.ts";
import { messageResponse } from "../auth/auth.schema.ts";
import { generationForRead } from "../generations/load.ts";
import { idParams } from "../jobs/jobs.schema.ts";
import { defineRoute } from "../route.ts";
import { ADJUSTMENT_BODY_LIMIT, createAdjustmentBody, updateAdjustmentBody } from "./adjustments.schema.ts";
import { projectStateResponses } from "../projectStates.ts";

const tags = ["Code adjustments"];
const envelope = z.object({ message: z.string(), adjustment: adjustmentResource });

/** The template or generator that keys a generation's adjustments. @throws 422 when both are gone */
function keyOf(generation: GenerationRow) {
  const source = sourceOf(generation);
  if (!source) throw invalid({ code_generation_id: ["The template or generator that made this generation was deleted; its files cannot be adjusted."] });
  return source;
}

/** A generation whose project's content the caller may change. @throws 404, 403, 423, 402, 409 */
async function generationForEdit(tx: CommonQueryMethods, id: number, user: UserRow): Promise<GenerationRow> {
  const { generation } = await generationForRead(tx, id, user);
  await projectForWrite(tx, generation.project_id, user, "content");
  return generation;
}

/** An adjustment the caller may see; with `edit`, row-locked and changeable by them. @throws 404, 403, 423, 402, 409 */
async function adjustmentFor(conn: CommonQueryMethods, id: number, user: UserRow, edit: boolean): Promise<AdjustmentRow> {
  const row = await findAdjustment(conn, id, edit);
  if (!row) throw notFound("Code adjustment");
  try {
    await projectForRead(conn, row.project_id, user);
  } catch {
    throw notFound("Code adjustment");
  }
  if (edit) await projectForWrite(conn, row.project_id, user, "content");
  return row;
}

const list = defineRoute({
  method: "get",
  path: "/code-generations/{id}/adjustments",
  summary: "The adjustments of a generation's template or generator, in the order they apply",
  description: "Adjustments belong to the template or generator that produced the generation, so every generation of it lists the same ones; paused ones (`is_active: false`) included.",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { 200: { description: "Adjustments", schema: z.object({ data: z.array(adjustmentResource) }) } },
  handler: async (ctx, { params }) => {
    const { pool } = ctx.deps;
    const { generation } = await generationForRead(pool, params.id, currentUser(ctx));
    const source = sourceOf(generation);
    ctx.body = { data: source ? (await listAdjustments(pool, generation.project_id, source)).map(presentAdjustment) : [] };
  },
});

const create = defineRoute({
  method: "post",
  path: "/code-generations/{id}/adjustments",
  summary: "Keep an edit of a generated file: send the edited file or a unified diff",
  description: [
    "`{file_path, content}`: the file as you want it; the service stores the unified diff against this generation's version.",
    "`{file_path, diff}`: a unified diff of that file (`a/<path>`/`b/<path>` or bare names, or none); 422 names the first hunk",
    "that does not apply. The adjustment is kept for the generation's template or generator and re-applied by",
    "`POST /code-generations/{id}/apply-adjustments` (or every run of a generator with `apply_adjustments`).",
  ].join(" "),
  tags,
  auth: "bearer",
  params: idParams,
  body: createAdjustmentBody,
  bodyLimitBytes: ADJUSTMENT_BODY_LIMIT,
  responses: { ...projectStateResponses, 201: { description: "Created", schema: envelope } },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const row = await ctx.deps.pool.transaction(async (tx) => {
      const generation = await generationForEdit(tx, params.id, user);
      const source = keyOf(generation);
      const base = await generatedText(tx, generation.id, body.file_path);
      const edit = editOf(body.file_path, base, body);
      return insertAdjustment(tx, { projectId: generation.project_id, source, filePath: body.file_path, baseGenerationId: generation.id, baseContent: base, userId: user.id, ...edit });
    });
    ctx.status = 201;
    ctx.body = { message: "Adjustment saved.", adjustment: presentAdjustment(row) };
  },
});

const show = defineRoute({
  method: "get",
  path: "/code-adjustments/{id}",
  summary: "One code adjustment with its diff",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { 200: { description: "The adjustment", schema: z.object({ adjustment: adjustmentResource }) } },
  handler: async (ctx, { params }) => {
    ctx.body = { adjustment: presentAdjustment(await adjustmentFor(ctx.deps.pool, params.id, currentUser(ctx), false)) };
  },
});

const update = defineRoute({
  method: "put",
  path: "/code-adjustments/{id}",
  summary: "Change an adjustment's edit (content or diff, against the same generated file) or pause it",
  description: "`content` or `diff` replace the edit, still against the file of the generation it was made on; `is_active: false` keeps the adjustment but leaves it out of applies.",
  tags,
  auth: "bearer",
  params: idParams,
  body: updateAdjustmentBody,
  bodyLimitBytes: ADJUSTMENT_BODY_LIMIT,
  responses: { ...projectStateResponses, 200: { description: "Updated", schema: envelope } },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const row = await ctx.deps.pool.transaction(async (tx) => {
      const current = await adjustmentFor(tx, params.id, user, true);
      const edit = body.content !== undefined || body.diff !== undefined ? editOf(current.file_path, current.base_content, body) : undefined;
      return updateAdjustment(tx, current.id, { ...(edit ? { edit } : {}), ...(body.is_active !== undefined ? { isActive: body.is_active } : {}) });
    });
    ctx.body = { message: "Adjustment updated.", adjustment: presentAdjustment(row) };
  },
});

const remove = defineRoute({
  method: "delete",
  path: "/code-adjustments/{id}",
  summary: "Delete a code adjustment",
  description: "Later applies leave the file as generated; generations already written keep their merged files.",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { ...projectStateResponses, 200: { description: "Deleted", schema: messageResponse } },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    await ctx.deps.pool.transaction(async (tx) => deleteAdjustment(tx, (await adjustmentFor(tx, params.id, user, true)).id));
    ctx.body = { message: "Adjustment deleted." };
  },
});

const apply = defineRoute({
  method: "post",
  path: "/code-generations/{id}/apply-adjustments",
  summary: "Apply the active adjustments: a new generation with the merged files",
  description: [
    "Each active adjustment of the generation's template or generator is merged three ways (base: the generation it was made on;",
    "ours: the adjustment; theirs: this generation), in order. Answers the new generation's id and per-file `status`:",
    "`applied`, `already_present` (the file holds the edit already), `conflict` (the file carries `<<<<<<<`/`|||||||`/`=======`/`>>>>>>>`",
    "markers; listed in `conflicts`) or `file_missing` (this generation has no such file). This generation is not changed.",
    "422 `no_adjustments` when none is active. Runs as a job; `Prefer: respond-async` answers 202 at once.",
  ].join(" "),
  tags,
  auth: "bearer",
  params: idParams,
  responses: {
    ...projectStateResponses,
    201: { description: "Applied into a new generation", schema: applyResultResource },
    ...acceptedResponse,
    422: { description: "No active adjustment (`no_adjustments`), or the template or generator that made the generation was deleted" },
  },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    const job = await ctx.deps.pool.transaction(async (tx) => {
      const generation = await generationForEdit(tx, params.id, user);
      keyOf(generation);
      return enqueue(tx, adjustmentsApply, { code_generation_id: generation.id, user_id: user.id }, { userId: user.id, projectId: generation.project_id });
    });
    await respondWithJob(ctx, job, (row) => {
      const result = row.result as { code_generation_id: number; adjusted_from_id: number; files: Parameters<typeof presentApplyResults>[0] };
      const summary = presentApplyResults(result.files);
      ctx.status = 201;
      ctx.body = {
        message: summary.conflicts.length ? `Adjustments applied with conflicts in ${summary.conflicts.length} file(s).` : "Adjustments applied.",
        code_generation_id: result.code_generation_id,
        adjusted_from_id: result.adjusted_from_id,
        ...summary,
      };
    });
  },
});

export const adjustmentRoutes = [list, create, show, update, remove, apply];
