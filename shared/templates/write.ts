/**
 * Writing templates with their variables and files (create, duplicate, zip import, project
 * bundles). Input is already validated (shared/templates/input.ts).
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";
import type { FileInput, TemplateInput, VariableInput } from "./input.ts";
import type { FullTemplate } from "./store.ts";

const idRow = z.object({ id: z.number() });

/** Where a new template lives: a project, or the top level of its owner. */
export type TemplatePlace = { projectId: number; ownerId?: never } | { ownerId: number; projectId?: never };

/** Inserts a template with its variables and files; returns its id. */
export async function insertTemplate(tx: CommonQueryMethods, place: TemplatePlace, userId: number | null, input: TemplateInput): Promise<number> {
  const id = await tx.oneFirst(sql.type(idRow)`
    insert into templates (project_id, owner_id, user_id, name, description, content, engine_type)
    values (${place.projectId ?? null}, ${place.ownerId ?? null}, ${userId}, ${input.name}, ${input.description}, ${input.content}, ${input.engine_type})
    returning id`);
  await replaceParts(tx, id, input.variables, input.files);
  return id;
}

/** Replaces all variables and files of a template. */
export async function replaceParts(tx: CommonQueryMethods, templateId: number, variables: readonly VariableInput[], files: readonly FileInput[]): Promise<void> {
  await tx.query(sql.type(z.object({}))`delete from template_variables where template_id = ${templateId}`);
  await tx.query(sql.type(z.object({}))`delete from template_files where template_id = ${templateId}`);
  for (const [index, variable] of variables.entries()) await insertVariable(tx, templateId, { ...variable, position: variable.position ?? index });
  for (const [index, file] of files.entries()) await insertFile(tx, templateId, { ...file, order: file.order ?? index });
}

/** Inserts one variable; returns its id. A position left out goes last. */
export async function insertVariable(tx: CommonQueryMethods, templateId: number, v: VariableInput): Promise<number> {
  const position = v.position ?? sql.fragment`(select coalesce(max(position) + 1, 0) from template_variables where template_id = ${templateId})`;
  return tx.oneFirst(sql.type(idRow)`
    insert into template_variables (template_id, name, description, type, required, default_value, position)
    values (${templateId}, ${v.name}, ${v.description}, ${v.type}, ${v.required},
      ${v.default_value === null ? null : sql.jsonb(v.default_value as never)}, ${position})
    returning id`);
}

/** Inserts one file; returns its id. An order left out goes last. */
export async function insertFile(tx: CommonQueryMethods, templateId: number, f: FileInput): Promise<number> {
  const order = f.order ?? sql.fragment`(select coalesce(max("order") + 1, 0) from template_files where template_id = ${templateId})`;
  return tx.oneFirst(sql.type(idRow)`
    insert into template_files (template_id, file_name, content, "order", repeat)
    values (${templateId}, ${f.file_name}, ${f.content}, ${order}, ${f.repeat})
    returning id`);
}

/** The variables and files of a loaded template as input (for copies and re-writes). */
export function partsOf(full: Pick<FullTemplate, "variables" | "files">): { variables: VariableInput[]; files: FileInput[] } {
  return {
    variables: full.variables.map((v) => ({
      name: v.name,
      description: v.description,
      type: v.type,
      required: v.required,
      default_value: (v.default_value ?? null) as VariableInput["default_value"],
      position: v.position,
    })),
    files: full.files.map((f) => ({ file_name: f.file_name, content: f.content, order: f.order, repeat: f.repeat })),
  };
}
