/**
 * Top-level templates (spec "Route groups listed by method and path only"): the caller's own
 * templates, outside any project. They are written as whole documents (fields plus
 * `variables` and `files` arrays) and used inside any project of the caller through the
 * project template paths (read, compile, structure, values, preview, execute, duplicate).
 */
import { z } from "zod";
import { ignoredRow, sql } from "../../../shared/db/pool.ts";
import { notFound } from "../../../shared/errors.ts";
import { findTopLevelTemplate, lockTemplate, templateRow } from "../../../shared/templates/store.ts";
import { insertTemplate } from "../../../shared/templates/write.ts";
import { currentUser } from "../../context.ts";
import { presentTemplateSummary, templateResource, templateSummary } from "../../presenters/template.ts";
import { messageResponse } from "../auth/auth.schema.ts";
import { defineRoute } from "../route.ts";
import { reloadTemplate, updateTemplate } from "./update.ts";
import { createTemplateBody, TEMPLATE_BODY_LIMIT, topLevelParams, updateTemplateBody } from "./templates.schema.ts";

const envelope = z.object({ message: z.string(), template: templateResource });
const tags = ["Templates"];

const list = defineRoute({
  method: "get",
  path: "/templates",
  summary: "The caller's top-level templates",
  tags,
  auth: "bearer",
  responses: { 200: { description: "Templates", schema: z.object({ data: z.array(templateSummary) }) } },
  handler: async (ctx) => {
    const user = currentUser(ctx);
    const rows = await ctx.deps.pool.any(sql.type(templateRow)`
      select id, project_id, owner_id, user_id, name, description, content, engine_type, created_at, updated_at
      from templates where project_id is null and owner_id = ${user.id} order by name, id`);
    ctx.body = { data: rows.map(presentTemplateSummary) };
  },
});

const create = defineRoute({
  method: "post",
  path: "/templates",
  summary: "Create a top-level template (with its variables and files)",
  tags,
  auth: "bearer",
  body: createTemplateBody,
  bodyLimitBytes: TEMPLATE_BODY_LIMIT,
  responses: { 201: { description: "Created", schema: envelope } },
  handler: async (ctx, { body }) => {
    const user = currentUser(ctx);
    const template = await ctx.deps.pool.transaction(async (tx) => reloadTemplate(tx, await insertTemplate(tx, { ownerId: user.id }, user.id, body)));
    ctx.status = 201;
    ctx.body = { message: "Template created.", template };
  },
});

const show = defineRoute({
  method: "get",
  path: "/templates/{id}",
  summary: "One of the caller's top-level templates",
  tags,
  auth: "bearer",
  params: topLevelParams,
  responses: { 200: { description: "The template", schema: z.object({ template: templateResource }) } },
  handler: async (ctx, { params }) => {
    const row = await findTopLevelTemplate(ctx.deps.pool, params.id, currentUser(ctx).id);
    if (!row) throw notFound("Template");
    ctx.body = { template: await reloadTemplate(ctx.deps.pool, row.id) };
  },
});

const update = defineRoute({
  method: "put",
  path: "/templates/{id}",
  summary: "Update a top-level template; variables or files, when sent, replace the current ones",
  tags,
  auth: "bearer",
  params: topLevelParams,
  body: updateTemplateBody,
  bodyLimitBytes: TEMPLATE_BODY_LIMIT,
  responses: { 200: { description: "Updated", schema: envelope } },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const template = await ctx.deps.pool.transaction(async (tx) => {
      const row = await findTopLevelTemplate(tx, params.id, user.id);
      if (!row) throw notFound("Template");
      await lockTemplate(tx, row.id);
      await updateTemplate(tx, row.id, body);
      return reloadTemplate(tx, row.id);
    });
    ctx.body = { message: "Template updated.", template };
  },
});

const remove = defineRoute({
  method: "delete",
  path: "/templates/{id}",
  summary: "Delete a top-level template (copies made in projects stay)",
  tags,
  auth: "bearer",
  params: topLevelParams,
  responses: { 200: { description: "Deleted", schema: messageResponse } },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    await ctx.deps.pool.transaction(async (tx) => {
      const row = await findTopLevelTemplate(tx, params.id, user.id);
      if (!row) throw notFound("Template");
      await tx.query(sql.type(ignoredRow)`delete from templates where id = ${row.id}`);
    });
    ctx.body = { message: "Template deleted." };
  },
});

export const topLevelTemplateRoutes = [list, create, show, update, remove];
