/**
 * Project templates (spec "Templates"): list, read with variables and files, create,
 * update, delete, and duplicate (DESIGN §11), which also copies one of the caller's
 * top-level templates into the project.
 */
import { z } from "zod";
import { ignoredRow, sql } from "../../../shared/db/pool.ts";
import { loadFull, templateRow } from "../../../shared/templates/store.ts";
import { insertTemplate, partsOf } from "../../../shared/templates/write.ts";
import { currentUser } from "../../context.ts";
import { projectForRead, projectForWrite } from "../../policies/projectGuard.ts";
import { presentTemplate, presentTemplateSummary, templateResource, templateSummary } from "../../presenters/template.ts";
import { messageResponse } from "../auth/auth.schema.ts";
import { projectParams } from "../projects/projects.schema.ts";
import { defineRoute } from "../route.ts";
import { templateForEdit, templateForRead } from "./load.ts";
import { reloadTemplate, updateTemplate } from "./update.ts";
import { createTemplateBody, duplicateBody, projectTemplateParams, TEMPLATE_BODY_LIMIT, updateTemplateBody } from "./templates.schema.ts";
import { projectStateResponses } from "../projectStates.ts";

const envelope = z.object({ message: z.string(), template: templateResource });
const tags = ["Templates"];

const list = defineRoute({
  method: "get",
  path: "/projects/{projectId}/templates",
  summary: "The templates of a project",
  tags,
  auth: "bearer",
  params: projectParams,
  responses: { 200: { description: "Templates", schema: z.object({ data: z.array(templateSummary) }) } },
  handler: async (ctx, { params }) => {
    const project = await projectForRead(ctx.deps.pool, params.projectId, currentUser(ctx));
    const rows = await ctx.deps.pool.any(sql.type(templateRow)`
      select id, project_id, owner_id, user_id, name, description, content, engine_type, created_at, updated_at
      from templates where project_id = ${project.id} order by name, id`);
    ctx.body = { data: rows.map(presentTemplateSummary) };
  },
});

const show = defineRoute({
  method: "get",
  path: "/projects/{projectId}/templates/{templateId}",
  summary: "A template with its variables and files (a project's, or one of the caller's top-level templates)",
  tags,
  auth: "bearer",
  params: projectTemplateParams,
  responses: { 200: { description: "The template", schema: z.object({ template: templateResource }) } },
  handler: async (ctx, { params }) => {
    const { template } = await templateForRead(ctx.deps.pool, params.projectId, params.templateId, currentUser(ctx));
    ctx.body = { template: presentTemplate(await loadFull(ctx.deps.pool, template)) };
  },
});

const create = defineRoute({
  method: "post",
  path: "/projects/{projectId}/templates",
  summary: "Create a template in a project (optionally with its variables and files)",
  tags,
  auth: "bearer",
  params: projectParams,
  body: createTemplateBody,
  bodyLimitBytes: TEMPLATE_BODY_LIMIT,
  responses: { ...projectStateResponses, 201: { description: "Created", schema: envelope } },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const template = await ctx.deps.pool.transaction(async (tx) => {
      const project = await projectForWrite(tx, params.projectId, user, "content");
      return reloadTemplate(tx, await insertTemplate(tx, { projectId: project.id }, user.id, body));
    });
    ctx.status = 201;
    ctx.body = { message: "Template created.", template };
  },
});

const update = defineRoute({
  method: "put",
  path: "/projects/{projectId}/templates/{templateId}",
  summary: "Update a template; variables or files, when sent, replace the current ones",
  tags,
  auth: "bearer",
  params: projectTemplateParams,
  body: updateTemplateBody,
  bodyLimitBytes: TEMPLATE_BODY_LIMIT,
  responses: { ...projectStateResponses, 200: { description: "Updated", schema: envelope } },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const template = await ctx.deps.pool.transaction(async (tx) => {
      const { template } = await templateForEdit(tx, params.projectId, params.templateId, user);
      await updateTemplate(tx, template.id, body);
      return reloadTemplate(tx, template.id);
    });
    ctx.body = { message: "Template updated.", template };
  },
});

const remove = defineRoute({
  method: "delete",
  path: "/projects/{projectId}/templates/{templateId}",
  summary: "Delete a template (its code generations stay, without the link)",
  tags,
  auth: "bearer",
  params: projectTemplateParams,
  responses: { ...projectStateResponses, 200: { description: "Deleted", schema: messageResponse } },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    await ctx.deps.pool.transaction(async (tx) => {
      const { template } = await templateForEdit(tx, params.projectId, params.templateId, user);
      await tx.query(sql.type(ignoredRow)`delete from templates where id = ${template.id}`);
    });
    ctx.body = { message: "Template deleted." };
  },
});

const duplicate = defineRoute({
  method: "post",
  path: "/projects/{projectId}/templates/{templateId}/duplicate",
  summary: "Copy a template (with variables and files) into the project",
  description: "The source is a template of the project or one of the caller's top-level templates; the copy is a project template named `{name} (copy)` unless a name is given.",
  tags,
  auth: "bearer",
  params: projectTemplateParams,
  body: duplicateBody,
  responses: { ...projectStateResponses, 201: { description: "The copy", schema: envelope } },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const template = await ctx.deps.pool.transaction(async (tx) => {
      const project = await projectForWrite(tx, params.projectId, user, "content");
      const { template: source } = await templateForRead(tx, project.id, params.templateId, user);
      const full = await loadFull(tx, source);
      const name = body.name ?? (source.project_id === null ? source.name : `${source.name} (copy)`.slice(0, 255));
      const id = await insertTemplate(tx, { projectId: project.id }, user.id, {
        name,
        description: full.description,
        content: full.content,
        engine_type: "ultimate",
        ...partsOf(full),
      });
      return reloadTemplate(tx, id);
    });
    ctx.status = 201;
    ctx.body = { message: "Template duplicated.", template };
  },
});

export const templateRoutes = [list, create, show, update, remove, duplicate];
