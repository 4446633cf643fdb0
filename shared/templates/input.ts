/**
 * Input schemas of templates, variables and files, shared by the routes, the zip import and
 * project bundles so that a template is judged by the same rules wherever it comes from.
 */
import { z } from "zod";
import { checkFileName } from "./fileNames.ts";
import { engineTypes, variableTypes } from "./store.ts";
import { checkDefault } from "./values.ts";

/** Longest template text (main content or one file), in characters. */
export const MAX_CONTENT_CHARS = 1_000_000;
export const MAX_VARIABLES = 200;
export const MAX_FILES = 500;

export const templateName = z.string().trim().min(1).max(255);
export const templateDescription = z.string().max(5000);
export const templateContent = z.string().max(MAX_CONTENT_CHARS);
export const engineType = z.enum(engineTypes);

export const variableName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, { error: "The name must start with a letter or _ and hold at most 64 letters, digits or _." })
  .refine((name) => name !== "loop", { error: "The name loop is reserved for loop metadata." });

/** Fields of a variable; `withDefaults` fills what a create may leave out. */
const variableFields = {
  name: variableName,
  description: templateDescription,
  type: z.enum(variableTypes),
  required: z.boolean(),
  default_value: z.json().nullable(),
  position: z.number().int().min(0).max(1_000_000),
};

export const variableInput = z
  .object({
    ...variableFields,
    description: variableFields.description.default(""),
    type: variableFields.type.default("string"),
    required: variableFields.required.default(false),
    default_value: variableFields.default_value.default(null),
    position: variableFields.position.optional(),
  })
  .superRefine((v, ctx) => {
    const problem = checkDefault(v.type, v.default_value);
    if (problem) ctx.addIssue({ code: "custom", path: ["default_value"], message: problem });
  });
export type VariableInput = z.infer<typeof variableInput>;

export const variablePatch = z
  .object({
    name: variableFields.name.optional(),
    description: variableFields.description.optional(),
    type: variableFields.type.optional(),
    required: variableFields.required.optional(),
    default_value: variableFields.default_value.optional(),
    position: variableFields.position.optional(),
  })
  .refine((v) => Object.keys(v).length > 0, { message: "Send at least one field to change." });

const fileName = z.string().min(1).max(1024);
const repeatPath = z.string().trim().min(1).max(255).nullable();
const fileOrder = z.number().int().min(-1_000_000).max(1_000_000);

export const fileInput = z
  .object({ file_name: fileName, content: templateContent.default(""), order: fileOrder.optional(), repeat: repeatPath.default(null) })
  .superRefine((f, ctx) => {
    for (const message of checkFileName(f.file_name, f.repeat)) ctx.addIssue({ code: "custom", path: ["file_name"], message });
  });
export type FileInput = z.infer<typeof fileInput>;

export const filePatch = z
  .object({ file_name: fileName.optional(), content: templateContent.optional(), order: fileOrder.optional(), repeat: repeatPath.optional() })
  .refine((v) => Object.keys(v).length > 0, { message: "Send at least one field to change." });

/** A whole template: its fields plus (optionally) its variables and files. */
export const templateInput = z
  .object({
    name: templateName,
    description: templateDescription.default(""),
    content: templateContent.default(""),
    engine_type: engineType.default("ultimate"),
    variables: z.array(variableInput).max(MAX_VARIABLES).default([]),
    files: z.array(fileInput).max(MAX_FILES).default([]),
  })
  .superRefine(refineUniqueParts);
export type TemplateInput = z.infer<typeof templateInput>;

/** Adds an issue for every variable name and file name used twice in one template body. */
export function refineUniqueParts(t: { variables?: readonly { name: string }[] | undefined; files?: readonly { file_name: string }[] | undefined }, ctx: z.RefinementCtx): void {
  const seen = new Set<string>();
  (t.variables ?? []).forEach((v, i) => {
    if (seen.has(v.name)) ctx.addIssue({ code: "custom", path: ["variables", i, "name"], message: `The variable ${v.name} is declared twice.` });
    seen.add(v.name);
  });
  const names = new Set<string>();
  (t.files ?? []).forEach((f, i) => {
    if (names.has(f.file_name)) ctx.addIssue({ code: "custom", path: ["files", i, "file_name"], message: `The file name ${f.file_name} is used twice.` });
    names.add(f.file_name);
  });
}
