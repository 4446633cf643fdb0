/**
 * Template variables (DESIGN §11: …/templates/{t}/variables[/{id}]): name, description,
 * type (string, number, boolean, list, object, schema), required, default_value, position.
 */
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods } from "../../../shared/db/pool.ts";
import { invalid, notFound } from "../../../shared/errors.ts";
import { variableInput, variablePatch } from "../../../shared/templates/input.ts";
import { listVariables, touchTemplate, variableRow, type VariableRow } from "../../../shared/templates/store.ts";
import { checkDefault } from "../../../shared/templates/values.ts";
import { insertVariable } from "../../../shared/templates/write.ts";
import { currentUser } from "../../context.ts";
import { presentVariable, variableResource } from "../../presenters/template.ts";
import { messageResponse } from "../auth/auth.schema.ts";
import { defineRoute } from "../route.ts";
import { templateForEdit, templateForRead } from "./load.ts";
import { projectTemplateParams, variableParams } from "./templates.schema.ts";
import { projectStateResponses } from "../projectStates.ts";

const envelope = z.object({ message: z.string(), variable: variableResource });
const tags = ["Templates"];
const base = "/projects/{projectId}/templates/{templateId}/variables";

async function findVariable(conn: CommonQueryMethods, templateId: number, id: number): Promise<VariableRow> {
  const row = await conn.maybeOne(sql.type(variableRow)`
    select id, template_id, name, description, type, required, default_value, position, created_at, updated_at
    from template_variables where id = ${id} and template_id = ${templateId}`);
  if (!row) throw notFound("Variable");
  return row;
}

async function assertNameFree(conn: CommonQueryMethods, templateId: number, name: string, exceptId: number | null): Promise<void> {
  const taken = await conn.exists(sql.type(z.object({}))`
    select 1 from template_variables where template_id = ${templateId} and name = ${name} and id <> ${exceptId ?? 0}`);
  if (taken) throw invalid({ name: [`The template already has a variable named ${name}.`] });
}

const list = defineRoute({
  method: "get",
  path: base,
  summary: "The variables of a template",
  tags,
  auth: "bearer",
  params: projectTemplateParams,
  responses: { 200: { description: "Variables", schema: z.object({ data: z.array(variableResource) }) } },
  handler: async (ctx, { params }) => {
    const { template } = await templateForRead(ctx.deps.pool, params.projectId, params.templateId, currentUser(ctx));
    ctx.body = { data: (await listVariables(ctx.deps.pool, template.id)).map(presentVariable) };
  },
});

const show = defineRoute({
  method: "get",
  path: `${base}/{variableId}`,
  summary: "One variable of a template",
  tags,
  auth: "bearer",
  params: variableParams,
  responses: { 200: { description: "The variable", schema: z.object({ variable: variableResource }) } },
  handler: async (ctx, { params }) => {
    const { template } = await templateForRead(ctx.deps.pool, params.projectId, params.templateId, currentUser(ctx));
    ctx.body = { variable: presentVariable(await findVariable(ctx.deps.pool, template.id, params.variableId)) };
  },
});

const create = defineRoute({
  method: "post",
  path: base,
  summary: "Add a variable to a template",
  tags,
  auth: "bearer",
  params: projectTemplateParams,
  body: variableInput,
  responses: { ...projectStateResponses, 201: { description: "Created", schema: envelope } },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const variable = await ctx.deps.pool.transaction(async (tx) => {
      const { template } = await templateForEdit(tx, params.projectId, params.templateId, user);
      await assertNameFree(tx, template.id, body.name, null);
      const count = await tx.oneFirst(sql.type(z.object({ count: z.number() }))`select count(*)::int as count from template_variables where template_id = ${template.id}`);
      if (count >= 200) throw invalid({ name: ["A template holds at most 200 variables."] });
      const id = await insertVariable(tx, template.id, body);
      await touchTemplate(tx, template.id);
      return findVariable(tx, template.id, id);
    });
    ctx.status = 201;
    ctx.body = { message: "Variable created.", variable: presentVariable(variable) };
  },
});

const update = defineRoute({
  method: "put",
  path: `${base}/{variableId}`,
  summary: "Change a variable",
  tags,
  auth: "bearer",
  params: variableParams,
  body: variablePatch,
  responses: { ...projectStateResponses, 200: { description: "Updated", schema: envelope } },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const variable = await ctx.deps.pool.transaction(async (tx) => {
      const { template } = await templateForEdit(tx, params.projectId, params.templateId, user);
      const current = await findVariable(tx, template.id, params.variableId);
      if (body.name !== undefined) await assertNameFree(tx, template.id, body.name, current.id);
      const type = body.type ?? current.type;
      // A type change drops a default that no longer fits, unless a new default is sent.
      const defaultValue = body.default_value !== undefined ? body.default_value : checkDefault(type, current.default_value) ? null : (current.default_value ?? null);
      const problem = checkDefault(type, defaultValue);
      if (problem) throw invalid({ default_value: [problem] });
      await tx.query(sql.type(ignoredRow)`
        update template_variables set
          name = ${body.name ?? current.name}, description = ${body.description ?? current.description}, type = ${type},
          required = ${body.required ?? current.required}, position = ${body.position ?? current.position},
          default_value = ${defaultValue === null ? null : sql.jsonb(defaultValue as never)}, updated_at = now()
        where id = ${current.id}`);
      await touchTemplate(tx, template.id);
      return findVariable(tx, template.id, current.id);
    });
    ctx.body = { message: "Variable updated.", variable: presentVariable(variable) };
  },
});

const remove = defineRoute({
  method: "delete",
  path: `${base}/{variableId}`,
  summary: "Remove a variable",
  tags,
  auth: "bearer",
  params: variableParams,
  responses: { ...projectStateResponses, 200: { description: "Deleted", schema: messageResponse } },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    await ctx.deps.pool.transaction(async (tx) => {
      const { template } = await templateForEdit(tx, params.projectId, params.templateId, user);
      const current = await findVariable(tx, template.id, params.variableId);
      await tx.query(sql.type(ignoredRow)`delete from template_variables where id = ${current.id}`);
      await touchTemplate(tx, template.id);
    });
    ctx.body = { message: "Variable deleted." };
  },
});

export const variableRoutes = [list, create, show, update, remove];
