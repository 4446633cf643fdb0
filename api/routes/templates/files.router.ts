/**
 * Template files (DESIGN §11: …/templates/{t}/files[/{id}]): file_name (an output path that
 * may hold placeholders, checked by the engine when saved), content, order, repeat.
 */
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods } from "../../../shared/db/pool.ts";
import { invalid, notFound } from "../../../shared/errors.ts";
import { checkFileName } from "../../../shared/templates/fileNames.ts";
import { fileInput, filePatch, MAX_FILES } from "../../../shared/templates/input.ts";
import { fileRow, listFiles, touchTemplate, type FileRow } from "../../../shared/templates/store.ts";
import { insertFile } from "../../../shared/templates/write.ts";
import { currentUser } from "../../context.ts";
import { fileResource, presentFile } from "../../presenters/template.ts";
import { messageResponse } from "../auth/auth.schema.ts";
import { defineRoute } from "../route.ts";
import { templateForEdit, templateForRead } from "./load.ts";
import { fileParams, projectTemplateParams } from "./templates.schema.ts";
import { projectStateResponses } from "../projectStates.ts";

const envelope = z.object({ message: z.string(), file: fileResource });
const tags = ["Templates"];
const base = "/projects/{projectId}/templates/{templateId}/files";
const FILE_BODY_LIMIT = 4 * 1024 * 1024;

async function findFile(conn: CommonQueryMethods, templateId: number, id: number): Promise<FileRow> {
  const row = await conn.maybeOne(sql.type(fileRow)`
    select id, template_id, file_name, content, "order", repeat, created_at, updated_at
    from template_files where id = ${id} and template_id = ${templateId}`);
  if (!row) throw notFound("File");
  return row;
}

async function assertNameFree(conn: CommonQueryMethods, templateId: number, fileName: string, exceptId: number | null): Promise<void> {
  const taken = await conn.exists(sql.type(z.object({}))`
    select 1 from template_files where template_id = ${templateId} and file_name = ${fileName} and id <> ${exceptId ?? 0}`);
  if (taken) throw invalid({ file_name: [`The template already has a file named ${fileName}.`] });
}

const list = defineRoute({
  method: "get",
  path: base,
  summary: "The files of a template, in output order",
  tags,
  auth: "bearer",
  params: projectTemplateParams,
  responses: { 200: { description: "Files", schema: z.object({ data: z.array(fileResource) }) } },
  handler: async (ctx, { params }) => {
    const { template } = await templateForRead(ctx.deps.pool, params.projectId, params.templateId, currentUser(ctx));
    ctx.body = { data: (await listFiles(ctx.deps.pool, template.id)).map(presentFile) };
  },
});

const show = defineRoute({
  method: "get",
  path: `${base}/{fileId}`,
  summary: "One file of a template",
  tags,
  auth: "bearer",
  params: fileParams,
  responses: { 200: { description: "The file", schema: z.object({ file: fileResource }) } },
  handler: async (ctx, { params }) => {
    const { template } = await templateForRead(ctx.deps.pool, params.projectId, params.templateId, currentUser(ctx));
    ctx.body = { file: presentFile(await findFile(ctx.deps.pool, template.id, params.fileId)) };
  },
});

const create = defineRoute({
  method: "post",
  path: base,
  summary: "Add a file to a template",
  tags,
  auth: "bearer",
  params: projectTemplateParams,
  body: fileInput,
  bodyLimitBytes: FILE_BODY_LIMIT,
  responses: { ...projectStateResponses, 201: { description: "Created", schema: envelope } },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const file = await ctx.deps.pool.transaction(async (tx) => {
      const { template } = await templateForEdit(tx, params.projectId, params.templateId, user);
      await assertNameFree(tx, template.id, body.file_name, null);
      const count = await tx.oneFirst(sql.type(z.object({ count: z.number() }))`select count(*)::int as count from template_files where template_id = ${template.id}`);
      if (count >= MAX_FILES) throw invalid({ file_name: [`A template holds at most ${MAX_FILES} files.`] });
      const id = await insertFile(tx, template.id, body);
      await touchTemplate(tx, template.id);
      return findFile(tx, template.id, id);
    });
    ctx.status = 201;
    ctx.body = { message: "File created.", file: presentFile(file) };
  },
});

const update = defineRoute({
  method: "put",
  path: `${base}/{fileId}`,
  summary: "Change a file",
  tags,
  auth: "bearer",
  params: fileParams,
  body: filePatch,
  bodyLimitBytes: FILE_BODY_LIMIT,
  responses: { ...projectStateResponses, 200: { description: "Updated", schema: envelope } },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const file = await ctx.deps.pool.transaction(async (tx) => {
      const { template } = await templateForEdit(tx, params.projectId, params.templateId, user);
      const current = await findFile(tx, template.id, params.fileId);
      const fileName = body.file_name ?? current.file_name;
      const repeat = body.repeat !== undefined ? body.repeat : current.repeat;
      const problems = checkFileName(fileName, repeat);
      if (problems.length) throw invalid({ file_name: problems });
      if (body.file_name !== undefined) await assertNameFree(tx, template.id, fileName, current.id);
      await tx.query(sql.type(ignoredRow)`
        update template_files set file_name = ${fileName}, content = ${body.content ?? current.content},
          "order" = ${body.order ?? current.order}, repeat = ${repeat}, updated_at = now()
        where id = ${current.id}`);
      await touchTemplate(tx, template.id);
      return findFile(tx, template.id, current.id);
    });
    ctx.body = { message: "File updated.", file: presentFile(file) };
  },
});

const remove = defineRoute({
  method: "delete",
  path: `${base}/{fileId}`,
  summary: "Remove a file",
  tags,
  auth: "bearer",
  params: fileParams,
  responses: { ...projectStateResponses, 200: { description: "Deleted", schema: messageResponse } },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    await ctx.deps.pool.transaction(async (tx) => {
      const { template } = await templateForEdit(tx, params.projectId, params.templateId, user);
      const current = await findFile(tx, template.id, params.fileId);
      await tx.query(sql.type(ignoredRow)`delete from template_files where id = ${current.id}`);
      await touchTemplate(tx, template.id);
    });
    ctx.body = { message: "File deleted." };
  },
});

export const fileRoutes = [list, create, show, update, remove];
