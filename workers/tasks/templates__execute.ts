/**
 * Runs templates (execute or preview) and, for execute, records the code generation with
 * its files, its archive build and its `CodeGenerated` event. Preview records nothing.
 *
 * Idempotent: a retry renders again (templates are deterministic apart from their code
 * blocks) and finds the generation its first attempt recorded (code_generations.job_id).
 * Bad input and template errors fail at once with a 422 the awaiting request returns.
 */
import { applyAdjustments, resultSummary } from "../../shared/adjustments/apply.ts";
import { recordGeneration } from "../../shared/generations/record.ts";
import { templatesExecute } from "../../shared/jobs/kinds.ts";
import { sandboxHost } from "../../shared/template/index.ts";
import { runTemplates } from "../../shared/templates/run.ts";
import { defineTask } from "../defineTask.ts";

// Start the code sandbox when the worker loads its tasks, not on the first request.
sandboxHost.warm().catch(() => undefined);

export default defineTask(templatesExecute, async (payload, { deps, jobId }) => {
  const { codeTimeLimitMs, codeMemoryBytes, renderTimeLimitMs, sandboxWorkers } = deps.config.templates;
  sandboxHost.resize(sandboxWorkers);
  const outcome = await runTemplates(
    deps.pool,
    {
      mode: payload.mode,
      projectId: payload.project_id,
      userId: payload.user_id,
      templateIds: payload.template_ids,
      schemaId: payload.schema_id,
      baseValues: payload.base_values,
      values: payload.values,
    },
    // One budget for every template of the run: its deadline is set here, once.
    { timeMs: codeTimeLimitMs, memoryBytes: codeMemoryBytes, renderTimeMs: renderTimeLimitMs, deadline: Date.now() + renderTimeLimitMs },
  );
  if (payload.mode === "preview") return { preview: outcome.output, warnings: outcome.warnings };
  const generationId = await recordGeneration(deps.pool, {
    projectId: payload.project_id,
    userId: payload.user_id,
    templateId: payload.generator_id === null ? (payload.template_ids[0] ?? null) : null,
    generatorId: payload.generator_id,
    schemaId: outcome.schemaId,
    values: outcome.values,
    files: outcome.files,
    jobId,
  });
  if (payload.apply_adjustments) {
    // The generator's flag: its adjustments go into a second generation in the same job, and
    // the run answers that one (a retry finds both through the job's keys).
    const adjusted = await applyAdjustments(deps.pool, { generationId, userId: payload.user_id, applyKey: `job:${jobId ?? 0}:adjust:${generationId}` });
    if (adjusted) {
      return {
        output: outcome.output,
        files: { ...outcome.files, ...Object.fromEntries(adjusted.changed) },
        code_generation_id: adjusted.codeGenerationId,
        adjustments: { adjusted_from_id: generationId, ...resultSummary(adjusted.results) },
      };
    }
  }
  return { output: outcome.output, files: outcome.files, code_generation_id: generationId };
});
