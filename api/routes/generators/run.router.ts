/**
 * Running a generator: all its templates, in order, as one code generation (the
 * `templates__execute` job, awaited). Body: variable values over the generator's own; the
 * generator's schema fills schema variables. Two templates writing one path is a 422.
 */
import { invalid } from "../../../shared/errors.ts";
import { enqueue } from "../../../shared/jobs/enqueue.ts";
import { templatesExecute } from "../../../shared/jobs/kinds.ts";
import { currentUser } from "../../context.ts";
import { acceptedResponse, respondWithJob } from "../../jobResponse.ts";
import { authorize } from "../../policies/authorize.ts";
import { canRunGenerator } from "../../policies/generator.ts";
import { idParams } from "../jobs/jobs.schema.ts";
import { defineRoute } from "../route.ts";
import { executeResult } from "../templates/run.router.ts";
import { valuesBody } from "../templates/templates.schema.ts";
import { generatorForRead, generatorProjectForWrite, requireOwnerContentRight } from "./generators.router.ts";
import { projectStateResponses } from "../projectStates.ts";

const runRefusal = (status: string) =>
  status === "Archived"
    ? "The generator is archived."
    : status === "Draft"
      ? "Only the generator's owner may run it before it is published."
      : "Only the generator's owner and the members of its team may run it.";

const execute = defineRoute({
  method: "post",
  path: "/generators/{id}/execute",
  summary: "Run a generator: one code generation from all its templates",
  description: "Its owner may run a Draft or Published generator; members of its team (and super admins) only a Published one; nobody an Archived one.",
  tags: ["Generators"],
  auth: "bearer",
  params: idParams,
  body: valuesBody,
  responses: { ...projectStateResponses, 200: { description: "The result", schema: executeResult }, ...acceptedResponse },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const job = await ctx.deps.pool.transaction(async (tx) => {
      const generator = await generatorForRead(tx, params.id, user);
      authorize(canRunGenerator(user, generator), runRefusal(generator.status));
      await requireOwnerContentRight(tx, generator, user);
      if (generator.templates.length === 0) throw invalid({ template_ids: ["The generator has no templates."] });
      const project = await generatorProjectForWrite(tx, generator, user);
      return enqueue(
        tx,
        templatesExecute,
        {
          mode: "execute",
          project_id: project.id,
          user_id: user.id,
          template_ids: generator.templates.map((t) => t.id),
          generator_id: generator.id,
          schema_id: generator.schema_id,
          base_values: generator.values,
          values: body,
          apply_adjustments: generator.apply_adjustments,
        },
        { userId: user.id, projectId: project.id },
      );
    });
    await respondWithJob(ctx, job, (row) => {
      ctx.body = executeResult.parse(row.result);
    });
  },
});

export const generatorRunRoutes = [execute];
