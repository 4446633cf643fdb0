/**
 * POST /projects/{projectId}/schemas/{schemaId}/translations/auto {target_language,
 * source_language?}: queues the automatic translation of the schema's labels (job
 * `translations__auto`, batches of 50 to the DeepL-shaped provider, human entries kept) and
 * answers 202 with the job to follow. 503 `translation_unavailable` without
 * TRANSLATION_API_URL and TRANSLATION_API_KEY.
 */
import { z } from "zod";
import { AppError, notFound } from "../../../shared/errors.ts";
import { enqueue } from "../../../shared/jobs/enqueue.ts";
import { presentJob } from "../../../shared/jobs/events.ts";
import { translationsAuto } from "../../../shared/jobs/kinds.ts";
import { findReadySchema } from "../../../shared/schemas/store.ts";
import { currentUser } from "../../context.ts";
import { acceptedResponse } from "../../jobResponse.ts";
import { projectForWrite } from "../../policies/projectGuard.ts";
import { defineRoute } from "../route.ts";
import { schemaParams } from "./schemas.schema.ts";
import { projectStateResponses } from "../projectStates.ts";

const language = z.string().trim().regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$/, { error: "The language must be a language code such as en, de or pt-BR." });

const autoTranslate = defineRoute({
  method: "post",
  path: "/projects/{projectId}/schemas/{schemaId}/translations/auto",
  summary: "Translate the schema's labels into a language automatically (human entries are kept)",
  tags: ["Schemas"],
  auth: "bearer",
  params: schemaParams,
  body: z.object({ target_language: language, source_language: language.nullable().optional() }),
  responses: { ...projectStateResponses, ...acceptedResponse, 503: { description: "No translation provider is configured (`translation_unavailable`)" } },
  handler: async (ctx, { params, body }) => {
    const { pool, config } = ctx.deps;
    const user = currentUser(ctx);
    const job = await pool.transaction(async (tx) => {
      const project = await projectForWrite(tx, params.projectId, user, "content");
      const schema = await findReadySchema(tx, project.id, params.schemaId);
      if (!schema) throw notFound("Schema");
      if (!config.translation.apiUrl || !config.translation.apiKey) throw new AppError(503, "translation_unavailable", "Automatic translation is not configured on this server.");
      return enqueue(tx, translationsAuto, { schema_id: schema.id, target_language: body.target_language, source_language: body.source_language ?? null }, { userId: user.id, projectId: project.id });
    });
    ctx.status = 202;
    ctx.set("Location", `/api/jobs/${job.id}`);
    ctx.body = { message: "Translation queued; follow the job for its result.", job: presentJob(job) };
  },
});

export const autoTranslateRoutes = [autoTranslate];
