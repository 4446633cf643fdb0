/**
 * Request schemas of the template routes.
 */
import { z } from "zod";
import { engineType, fileInput, templateContent, templateDescription, templateInput, templateName, variableInput } from "../../../shared/templates/input.ts";
import { MAX_FILES, MAX_VARIABLES, refineUniqueParts } from "../../../shared/templates/input.ts";

const id = z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER);

export const projectTemplateParams = z.object({ projectId: id, templateId: id });
export const variableParams = projectTemplateParams.extend({ variableId: id });
export const fileParams = projectTemplateParams.extend({ fileId: id });
export const topLevelParams = z.object({ id });

/** Body of a template create (project or top level): the spec's fields, optionally with variables and files. */
export const createTemplateBody = templateInput;

/** Body of a template update: any of the fields; `variables` or `files`, when sent, replace the current ones. */
export const updateTemplateBody = z
  .object({
    name: templateName.optional(),
    description: templateDescription.optional(),
    content: templateContent.optional(),
    engine_type: engineType.optional(),
    variables: z.array(variableInput).max(MAX_VARIABLES).optional(),
    files: z.array(fileInput).max(MAX_FILES).optional(),
  })
  .refine((v) => Object.keys(v).length > 0, { message: "Send at least one field to change." })
  .superRefine(refineUniqueParts);

export const duplicateBody = z.object({ name: templateName.optional() });

/** Variable values: an object of values by variable name. */
export const valuesBody = z.record(z.string().max(64), z.json());

/** Largest JSON body of routes that carry whole templates. */
export const TEMPLATE_BODY_LIMIT = 16 * 1024 * 1024;

/** What the routes that compile on the process's compile threads may answer besides (shared/template/compiler/pool.ts). */
export const compilerBusy = { 503: { description: "Too many templates are being compiled in this process at once (`template_compiler_busy`, `Retry-After`)" } };
