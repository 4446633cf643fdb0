/**
 * Forms of a project (DESIGN §11, §14): `/projects/{p}/forms[/{f}]` `{name, description,
 * schema_id, table_name}`, fields `{field_name, label}` added and removed, and the layout
 * placing them. Reads need the project visible; writes the right to edit its content, and
 * follow the project's state (423 locked, 402 expired, 409 archived).
 */
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods } from "../../../shared/db/pool.ts";
import { invalid, notFound } from "../../../shared/errors.ts";
import { checkFormLayout, formLayout } from "../../../shared/forms/projectDocs.ts";
import { schemaFieldsById } from "../../../shared/forms/staleBindings.ts";
import { addFormField, findForm, formFieldRow, formFields, insertBound, listForms, removeFormField, saveFormLayout, updateBound } from "../../../shared/forms/projectStore.ts";
import { currentUser } from "../../context.ts";
import { projectForRead, projectForWrite } from "../../policies/projectGuard.ts";
import { formFieldResource, presentForm, projectFormResource, type ProjectFormResource } from "../../presenters/projectForm.ts";
import { messageResponse } from "../auth/auth.schema.ts";
import { projectParams } from "../projects/projects.schema.ts";
import { defineRoute } from "../route.ts";
import { addFieldBody, createBoundBody, formFieldParams, projectFormParams, updateBoundBody } from "./projectForms.schema.ts";

const tags = ["Project forms"];
const envelope = z.object({ message: z.string(), form: projectFormResource });
const writeStates = { 402: { description: "The project's subscription expired" }, 409: { description: "The project is archived" }, 423: { description: "The project is locked" } };

async function present(conn: CommonQueryMethods, projectId: number, id: number): Promise<ProjectFormResource> {
  const row = await findForm(conn, projectId, id);
  if (!row) throw notFound("Form");
  const [fields, tables] = await Promise.all([formFields(conn, [row.id]), schemaFieldsById(conn, projectId, [row.schema_id])]);
  return presentForm(row, fields, tables.get(row.schema_id));
}

/** The form, locked, in a project the caller may edit now. */
async function formForWrite(tx: CommonQueryMethods, params: { projectId: number; formId: number }, user: Parameters<typeof projectForWrite>[2]) {
  const project = await projectForWrite(tx, params.projectId, user, "content");
  const form = await findForm(tx, project.id, params.formId, true);
  if (!form) throw notFound("Form");
  return form;
}

const list = defineRoute({
  method: "get",
  path: "/projects/{projectId}/forms",
  summary: "The project's forms with their fields and layouts",
  tags,
  auth: "bearer",
  params: projectParams,
  responses: { 200: { description: "The forms", schema: z.object({ data: z.array(projectFormResource) }) } },
  handler: async (ctx, { params }) => {
    const { pool } = ctx.deps;
    const project = await projectForRead(pool, params.projectId, currentUser(ctx));
    const rows = await listForms(pool, project.id);
    const [fields, tables] = await Promise.all([formFields(pool, rows.map((r) => r.id)), schemaFieldsById(pool, project.id, rows.map((r) => r.schema_id))]);
    ctx.body = { data: rows.map((row) => presentForm(row, fields, tables.get(row.schema_id))) };
  },
});

const create = defineRoute({
  method: "post",
  path: "/projects/{projectId}/forms",
  summary: "Create a form bound to a table of one of the project's schemas",
  tags,
  auth: "bearer",
  params: projectParams,
  body: createBoundBody,
  responses: { 201: { description: "Created", schema: envelope }, ...writeStates },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const form = await ctx.deps.pool.transaction(async (tx) => {
      const project = await projectForWrite(tx, params.projectId, user, "content");
      const id = await insertBound(tx, "form", project.id, user.id, { ...body, description: body.description ?? "" });
      return present(tx, project.id, id);
    });
    ctx.status = 201;
    ctx.body = { message: "Form created.", form };
  },
});

const show = defineRoute({
  method: "get",
  path: "/projects/{projectId}/forms/{formId}",
  summary: "A form with its fields and layout",
  tags,
  auth: "bearer",
  params: projectFormParams,
  responses: { 200: { description: "The form", schema: z.object({ form: projectFormResource }) } },
  handler: async (ctx, { params }) => {
    const project = await projectForRead(ctx.deps.pool, params.projectId, currentUser(ctx));
    ctx.body = { form: await present(ctx.deps.pool, project.id, params.formId) };
  },
});

const update = defineRoute({
  method: "put",
  path: "/projects/{projectId}/forms/{formId}",
  summary: "Update a form; binding another table removes its fields and layout items",
  tags,
  auth: "bearer",
  params: projectFormParams,
  body: updateBoundBody,
  responses: { 200: { description: "Updated", schema: envelope }, ...writeStates },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const form = await ctx.deps.pool.transaction(async (tx) => {
      const row = await formForWrite(tx, params, user);
      await updateBound(tx, "form", row, body);
      return present(tx, row.project_id, row.id);
    });
    ctx.body = { message: "Form updated.", form };
  },
});

const remove = defineRoute({
  method: "delete",
  path: "/projects/{projectId}/forms/{formId}",
  summary: "Delete a form",
  tags,
  auth: "bearer",
  params: projectFormParams,
  responses: { 200: { description: "Deleted", schema: messageResponse }, ...writeStates },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    await ctx.deps.pool.transaction(async (tx) => {
      const row = await formForWrite(tx, params, user);
      await tx.query(sql.type(ignoredRow)`delete from project_forms where id = ${row.id}`);
    });
    ctx.body = { message: "Form deleted." };
  },
});

const addField = defineRoute({
  method: "post",
  path: "/projects/{projectId}/forms/{formId}/fields",
  summary: "Add a field of the form's table to the form",
  description: "`{field_name, label}` (label defaults to the field name); 422 when the table has no such field or the form has it already.",
  tags,
  auth: "bearer",
  params: projectFormParams,
  body: addFieldBody,
  responses: { 201: { description: "Added", schema: z.object({ message: z.string(), field: formFieldResource, form: projectFormResource }) }, ...writeStates },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const result = await ctx.deps.pool.transaction(async (tx) => {
      const row = await formForWrite(tx, params, user);
      const id = await addFormField(tx, row, body.field_name, body.label);
      const form = await present(tx, row.project_id, row.id);
      return { field: form.fields.find((f) => f.id === id)!, form };
    });
    ctx.status = 201;
    ctx.body = { message: "Field added.", ...result };
  },
});

const removeField = defineRoute({
  method: "delete",
  path: "/projects/{projectId}/forms/{formId}/fields/{fieldId}",
  summary: "Remove a field from the form (and from its layout)",
  tags,
  auth: "bearer",
  params: formFieldParams,
  responses: { 200: { description: "Removed", schema: z.object({ message: z.string(), form: projectFormResource }) }, ...writeStates },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    const form = await ctx.deps.pool.transaction(async (tx) => {
      const row = await formForWrite(tx, params, user);
      const field = await tx.maybeOne(sql.type(formFieldRow)`
        select id, form_id, field_name, label, position from project_form_fields where id = ${params.fieldId} and form_id = ${row.id}`);
      if (!field) throw notFound("Form field");
      await removeFormField(tx, row, field);
      return present(tx, row.project_id, row.id);
    });
    ctx.body = { message: "Field removed.", form };
  },
});

const showLayout = defineRoute({
  method: "get",
  path: "/projects/{projectId}/forms/{formId}/layout",
  summary: "A form's layout",
  tags,
  auth: "bearer",
  params: projectFormParams,
  responses: {
    200: {
      description: "The layout, with the names of the fields it may place that a re-parse of the schema removed (`stale_fields`)",
      schema: z.object({ layout: formLayout, stale_fields: z.array(z.string()) }),
    },
  },
  handler: async (ctx, { params }) => {
    const form = await present(ctx.deps.pool, (await projectForRead(ctx.deps.pool, params.projectId, currentUser(ctx))).id, params.formId);
    ctx.body = { layout: form.layout, stale_fields: form.stale_fields };
  },
});

const saveLayout = defineRoute({
  method: "put",
  path: "/projects/{projectId}/forms/{formId}/layout",
  summary: "Replace a form's layout",
  description: "`{width, height, items: [{field_name, x, y, width, height, label}]}`: each item places a field of the form, inside the form's size.",
  tags,
  auth: "bearer",
  params: projectFormParams,
  body: formLayout,
  responses: { 200: { description: "Saved", schema: z.object({ message: z.string(), layout: formLayout }) }, ...writeStates },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    await ctx.deps.pool.transaction(async (tx) => {
      const row = await formForWrite(tx, params, user);
      const fields = new Set((await formFields(tx, [row.id])).map((f) => f.field_name));
      const errors = checkFormLayout(body, fields);
      if (Object.keys(errors).length) throw invalid(errors);
      await saveFormLayout(tx, row.id, body);
    });
    ctx.body = { message: "Layout saved.", layout: body };
  },
});

export const projectFormRoutes = [list, create, show, update, remove, addField, removeField, showLayout, saveLayout];
