/**
 * The Template resource (spec "Template"): lists carry id, name, description, engine_type,
 * created_at; a single read adds content, variables and files. `project_id` is null for a
 * top-level template.
 */
import { z } from "zod";
import type { FileRow, FullTemplate, TemplateRow, VariableRow } from "../../shared/templates/store.ts";

export const templateSummary = z.object({
  id: z.number(),
  project_id: z.number().nullable(),
  name: z.string(),
  description: z.string(),
  engine_type: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const variableResource = z.object({
  id: z.number(),
  name: z.string(),
  description: z.string(),
  type: z.string(),
  required: z.boolean(),
  default_value: z.unknown(),
  position: z.number(),
});

export const fileResource = z.object({
  id: z.number(),
  file_name: z.string(),
  order: z.number(),
  repeat: z.string().nullable(),
  content: z.string(),
});

export const templateResource = templateSummary.extend({
  content: z.string(),
  variables: z.array(variableResource),
  files: z.array(fileResource),
});

/** The list form of a template. */
export function presentTemplateSummary(row: TemplateRow): z.infer<typeof templateSummary> {
  return {
    id: row.id,
    project_id: row.project_id,
    name: row.name,
    description: row.description,
    engine_type: row.engine_type,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** A variable. */
export function presentVariable(row: VariableRow): z.infer<typeof variableResource> {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    type: row.type,
    required: row.required,
    default_value: row.default_value ?? null,
    position: row.position,
  };
}

/** A file. */
export function presentFile(row: FileRow): z.infer<typeof fileResource> {
  return { id: row.id, file_name: row.file_name, order: row.order, repeat: row.repeat, content: row.content };
}

/** The single-read form of a template. */
export function presentTemplate(full: FullTemplate): z.infer<typeof templateResource> {
  return {
    ...presentTemplateSummary(full),
    content: full.content,
    variables: full.variables.map(presentVariable),
    files: full.files.map(presentFile),
  };
}
