/**
 * Reading templates, their variables and files.
 *
 * Glossary: a *project template* has `project_id` set and belongs to that project; a
 * *top-level template* has `owner_id` set and belongs to one user, who may use it in any of
 * their projects (read, preview, execute, duplicate into the project).
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";

export const variableTypes = ["string", "number", "boolean", "list", "object", "schema"] as const;
export type VariableType = (typeof variableTypes)[number];

export const engineTypes = ["ultimate"] as const;

export const templateRow = z.object({
  id: z.number(),
  project_id: z.number().nullable(),
  owner_id: z.number().nullable(),
  user_id: z.number().nullable(),
  name: z.string(),
  description: z.string(),
  content: z.string(),
  engine_type: z.string(),
  created_at: z.date(),
  updated_at: z.date(),
});
export type TemplateRow = z.infer<typeof templateRow>;

export const variableRow = z.object({
  id: z.number(),
  template_id: z.number(),
  name: z.string(),
  description: z.string(),
  type: z.enum(variableTypes),
  required: z.boolean(),
  default_value: z.unknown(),
  position: z.number(),
  created_at: z.date(),
  updated_at: z.date(),
});
export type VariableRow = z.infer<typeof variableRow>;

export const fileRow = z.object({
  id: z.number(),
  template_id: z.number(),
  file_name: z.string(),
  content: z.string(),
  order: z.number(),
  repeat: z.string().nullable(),
  created_at: z.date(),
  updated_at: z.date(),
});
export type FileRow = z.infer<typeof fileRow>;

/** A template with its variables and files. */
export interface FullTemplate extends TemplateRow {
  variables: VariableRow[];
  files: FileRow[];
}

const templateColumns = sql.fragment`
  t.id, t.project_id, t.owner_id, t.user_id, t.name, t.description, t.content, t.engine_type, t.created_at, t.updated_at`;

/**
 * A template usable inside project `projectId` by `userId`: one of the project's, or one
 * of the user's own top-level templates (when `withTopLevel`).
 */
export async function findTemplateInProject(
  conn: CommonQueryMethods,
  projectId: number,
  templateId: number,
  userId: number,
  withTopLevel: boolean,
): Promise<TemplateRow | null> {
  const topLevel = withTopLevel ? sql.fragment`or (t.project_id is null and t.owner_id = ${userId})` : sql.fragment``;
  return conn.maybeOne(sql.type(templateRow)`
    select ${templateColumns} from templates t where t.id = ${templateId} and (t.project_id = ${projectId} ${topLevel})`);
}

/** A top-level template of `ownerId`. */
export async function findTopLevelTemplate(conn: CommonQueryMethods, templateId: number, ownerId: number): Promise<TemplateRow | null> {
  return conn.maybeOne(sql.type(templateRow)`
    select ${templateColumns} from templates t where t.id = ${templateId} and t.project_id is null and t.owner_id = ${ownerId}`);
}

/** Locks a template row (serialises edits of its variables and files). */
export async function lockTemplate(conn: CommonQueryMethods, templateId: number): Promise<void> {
  await conn.query(sql.type(z.object({ id: z.number() }))`select id from templates where id = ${templateId} for update`);
}

/** The variables of a template in position order. */
export async function listVariables(conn: CommonQueryMethods, templateId: number): Promise<VariableRow[]> {
  return [
    ...(await conn.any(sql.type(variableRow)`
      select id, template_id, name, description, type, required, default_value, position, created_at, updated_at
      from template_variables where template_id = ${templateId} order by position, id`)),
  ];
}

/** The files of a template in output order. */
export async function listFiles(conn: CommonQueryMethods, templateId: number): Promise<FileRow[]> {
  return [
    ...(await conn.any(sql.type(fileRow)`
      select id, template_id, file_name, content, "order", repeat, created_at, updated_at
      from template_files where template_id = ${templateId} order by "order", id`)),
  ];
}

/** A template row with its variables and files. */
export async function loadFull(conn: CommonQueryMethods, row: TemplateRow): Promise<FullTemplate> {
  const [variables, files] = await Promise.all([listVariables(conn, row.id), listFiles(conn, row.id)]);
  return { ...row, variables, files };
}

/** Bumps a template's updated_at after a change to it or its parts. */
export async function touchTemplate(conn: CommonQueryMethods, templateId: number): Promise<void> {
  await conn.query(sql.type(z.object({}))`update templates set updated_at = now() where id = ${templateId}`);
}

/** Saved variable values of a template in a project ({} when none). */
export async function savedValues(conn: CommonQueryMethods, projectId: number, templateId: number): Promise<Record<string, unknown>> {
  const row = await conn.maybeOne(sql.type(z.object({ values: z.record(z.string(), z.unknown()) }))`
    select "values" from template_variable_values where project_id = ${projectId} and template_id = ${templateId}`);
  return row?.values ?? {};
}
