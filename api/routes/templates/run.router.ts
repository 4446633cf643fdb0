/**
 * Running a template (spec "Templates": execute and preview), as the `templates__execute`
 * job awaited by the request (DESIGN §4). The body is the object of variable values.
 * Execute needs the right to change the project's content (it records a code generation);
 * preview only needs to see the project and records nothing.
 */
import { z } from "zod";
import { enqueue } from "../../../shared/jobs/enqueue.ts";
import { templatesExecute } from "../../../shared/jobs/kinds.ts";
import { currentUser } from "../../context.ts";
import { acceptedResponse, respondWithJob } from "../../jobResponse.ts";
import { defineRoute } from "../route.ts";
import { templateForProjectWrite, templateForRead } from "./load.ts";
import { projectTemplateParams, valuesBody } from "./templates.schema.ts";
import { projectStateResponses } from "../projectStates.ts";

const tags = ["Templates"];

export const executeResult = z.object({
  output: z.string(),
  files: z.record(z.string(), z.string()),
  code_generation_id: z.number(),
  /** A generator run with `apply_adjustments`: the generation as rendered and the results of applying its adjustments into `code_generation_id`. */
  adjustments: z
    .object({
      adjusted_from_id: z.number(),
      files: z.array(z.object({ file_path: z.string(), status: z.string(), adjustment_id: z.number().nullable(), conflicts: z.number() })),
      conflicts: z.array(z.string()),
    })
    .optional(),
});
export const warningResource = z.object({ file: z.string().nullable(), line: z.number().nullable(), column: z.number().nullable(), message: z.string() });
const previewResult = z.object({ preview: z.string(), warnings: z.array(warningResource) });

const execute = defineRoute({
  method: "post",
  path: "/projects/{projectId}/templates/{templateId}/execute",
  summary: "Run a template: output, files, and a recorded code generation",
  description:
    "Body: the variable values by name. Values saved for the project and declared defaults fill what the body leaves out; a `schema` variable takes the id of a parsed schema of the project. 422 `errors` are keyed by variable name, or by `file:line:column` for template errors.",
  tags,
  auth: "bearer",
  params: projectTemplateParams,
  body: valuesBody,
  responses: { ...projectStateResponses, 200: { description: "The result", schema: executeResult }, ...acceptedResponse },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const job = await ctx.deps.pool.transaction(async (tx) => {
      const { project, template } = await templateForProjectWrite(tx, params.projectId, params.templateId, user);
      return enqueue(
        tx,
        templatesExecute,
        { mode: "execute", project_id: project.id, user_id: user.id, template_ids: [template.id], values: body },
        { userId: user.id, projectId: project.id },
      );
    });
    await respondWithJob(ctx, job, (row) => {
      ctx.body = executeResult.parse(row.result);
    });
  },
});

const preview = defineRoute({
  method: "post",
  path: "/projects/{projectId}/templates/{templateId}/preview",
  summary: "Render a template without recording anything; missing values become warnings",
  tags,
  auth: "bearer",
  scope: "read", // records nothing but its job
  params: projectTemplateParams,
  body: valuesBody,
  responses: { 200: { description: "The preview", schema: previewResult }, ...acceptedResponse },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const { project, template } = await templateForRead(ctx.deps.pool, params.projectId, params.templateId, user);
    const job = await enqueue(
      ctx.deps.pool,
      templatesExecute,
      { mode: "preview", project_id: project.id, user_id: user.id, template_ids: [template.id], values: body },
      { userId: user.id, projectId: project.id },
    );
    await respondWithJob(ctx, job, (row) => {
      ctx.body = previewResult.parse(row.result);
    });
  },
});

export const runRoutes = [execute, preview];
