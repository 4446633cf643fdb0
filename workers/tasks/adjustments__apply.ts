/**
 * Applies the active code adjustments of a generation into a new generation (see
 * shared/adjustments/apply.ts). Idempotent: a retry finds the generation its job wrote.
 */
import { applyAdjustments } from "../../shared/adjustments/apply.ts";
import { AppError } from "../../shared/errors.ts";
import { adjustmentsApply } from "../../shared/jobs/kinds.ts";
import { defineTask } from "../defineTask.ts";

export default defineTask(adjustmentsApply, async (payload, { deps, jobId, attempt }) => {
  const outcome = await applyAdjustments(deps.pool, {
    generationId: payload.code_generation_id,
    userId: payload.user_id,
    applyKey: jobId === null ? `attempt:${payload.code_generation_id}:${attempt}` : `job:${jobId}`,
  });
  if (!outcome) {
    throw new AppError(422, "no_adjustments", "The template or generator of this generation has no active adjustments.", {
      code_generation_id: ["There are no active adjustments to apply."],
    });
  }
  return { code_generation_id: outcome.codeGenerationId, adjusted_from_id: outcome.adjustedFromId, files: outcome.results };
});
