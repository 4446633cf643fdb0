/**
 * Template tools (DESIGN §11): compile (syntax check of the saved template), structure (the
 * output tree a run would produce, without rendering contents), and the variable values a
 * project keeps per template.
 */
import { z } from "zod";
import { ignoredRow, sql } from "../../../shared/db/pool.ts";
import { invalid } from "../../../shared/errors.ts";
import { buildTree } from "../../../shared/generations/tree.ts";
import { TemplateError, type PlanResult } from "../../../shared/template/index.ts";
import { buildScope, loadSchemaInput } from "../../../shared/templates/scope.ts";
import { listVariables, loadFull, savedValues } from "../../../shared/templates/store.ts";
import { omittedWarning, templateErrorResponse } from "../../../shared/templates/run.ts";
import { checkSavedValues, schemaIdOf } from "../../../shared/templates/values.ts";
import { currentUser } from "../../context.ts";
import { treeNodeResource } from "../../presenters/tree.ts";
import { defineRoute } from "../route.ts";
import { templateForProjectWrite, templateForRead } from "./load.ts";
import { warningResource } from "./run.router.ts";
import { compilerBusy, projectTemplateParams, valuesBody } from "./templates.schema.ts";
import { projectStateResponses } from "../projectStates.ts";

const tags = ["Templates"];
const issueResource = z.object({ file: z.string(), line: z.number(), column: z.number(), message: z.string() });

const compile = defineRoute({
  method: "post",
  path: "/projects/{projectId}/templates/{templateId}/compile",
  summary: "Check a template's syntax: every file's first error, include and repeat problems",
  tags,
  auth: "bearer",
  scope: "read", // checks the saved template; writes nothing
  params: projectTemplateParams,
  responses: { ...compilerBusy, 200: { description: "The check", schema: z.object({ valid: z.boolean(), errors: z.array(issueResource) }) } },
  handler: async (ctx, { params }) => {
    const { template } = await templateForRead(ctx.deps.pool, params.projectId, params.templateId, currentUser(ctx));
    const full = await loadFull(ctx.deps.pool, template);
    const check = await ctx.deps.compiler.check({ content: full.content, files: full.files });
    ctx.body = { valid: check.valid, errors: check.errors };
  },
});

const structureQuery = z.object({
  values: z
    .string()
    .max(1024 * 1024)
    .optional()
    .transform((text, ctx) => {
      if (text === undefined) return {};
      try {
        const value: unknown = JSON.parse(text);
        if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
      } catch {
        // reported below
      }
      ctx.addIssue({ code: "custom", message: "The values parameter must be a JSON object of variable values." });
      return z.NEVER;
    }),
});

const structure = defineRoute({
  method: "get",
  path: "/projects/{projectId}/templates/{templateId}/structure",
  summary: "The files a run would write, as paths and as a folder tree",
  description:
    "Query `values`: a JSON object of variable values, over the values saved for the project and the defaults. File names are rendered (no contents, no code blocks); missing values become warnings. A template that does not compile is a 422 `template_error`, its `errors` keyed by `file:line:column`.",
  tags,
  auth: "bearer",
  params: projectTemplateParams,
  query: structureQuery,
  responses: {
    ...compilerBusy,
    200: {
      description: "The output structure",
      schema: z.object({ paths: z.array(z.string()), tree: z.array(treeNodeResource), warnings: z.array(warningResource) }),
    },
  },
  handler: async (ctx, { params, query }) => {
    const { pool } = ctx.deps;
    const { project, template } = await templateForRead(pool, params.projectId, params.templateId, currentUser(ctx));
    const full = await loadFull(pool, template);
    const built = await buildScope(pool, project.id, full.variables, [await savedValues(pool, project.id, template.id), query.values], true);
    let plan: PlanResult;
    try {
      plan = await ctx.deps.compiler.plan({ content: full.content, files: full.files }, built.scope);
    } catch (e) {
      // A template that does not compile (a syntax error, too large) had become a 500.
      if (e instanceof TemplateError) throw templateErrorResponse(e, null);
      throw e;
    }
    const warnings = [
      ...Object.entries(built.problems).flatMap(([name, messages]) => messages.map((message) => ({ file: null, line: null, column: null, message: `${message} (${name})` }))),
      ...plan.warnings,
      ...(plan.omittedWarnings > 0 ? [omittedWarning(plan.omittedWarnings)] : []),
    ];
    ctx.body = { paths: plan.paths, tree: buildTree(plan.paths.map((path) => ({ path, size: null }))), warnings };
  },
});

const valuesResponse = z.object({ values: z.record(z.string(), z.unknown()) });

const getValues = defineRoute({
  method: "get",
  path: "/projects/{projectId}/templates/{templateId}/values",
  summary: "The variable values the project keeps for a template",
  tags,
  auth: "bearer",
  params: projectTemplateParams,
  responses: { 200: { description: "The values", schema: valuesResponse } },
  handler: async (ctx, { params }) => {
    const { project, template } = await templateForRead(ctx.deps.pool, params.projectId, params.templateId, currentUser(ctx));
    ctx.body = { values: await savedValues(ctx.deps.pool, project.id, template.id) };
  },
});

const putValues = defineRoute({
  method: "put",
  path: "/projects/{projectId}/templates/{templateId}/values",
  summary: "Replace the variable values the project keeps for a template (used under a run's own values)",
  tags,
  auth: "bearer",
  params: projectTemplateParams,
  body: valuesBody,
  responses: { ...projectStateResponses, 200: { description: "Saved", schema: valuesResponse.extend({ message: z.string() }) } },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const values = await ctx.deps.pool.transaction(async (tx) => {
      const { project, template } = await templateForProjectWrite(tx, params.projectId, params.templateId, user);
      const variables = await listVariables(tx, template.id);
      const errors = checkSavedValues(variables, body);
      for (const variable of variables) {
        const id = variable.type === "schema" && !errors[variable.name] ? schemaIdOf(body[variable.name]) : null;
        if (id !== null && !(await loadSchemaInput(tx, project.id, id))) errors[variable.name] = [`Schema ${id} is not a parsed schema of this project.`];
      }
      if (Object.keys(errors).length) throw invalid(errors);
      await tx.query(sql.type(ignoredRow)`
        insert into template_variable_values (project_id, template_id, "values", updated_by)
        values (${project.id}, ${template.id}, ${sql.jsonb(body as never)}, ${user.id})
        on conflict (project_id, template_id) do update set "values" = excluded."values", updated_by = excluded.updated_by, updated_at = now()`);
      return body;
    });
    ctx.body = { message: "Values saved.", values };
  },
});

export const templateToolRoutes = [compile, structure, getValues, putValues];
