/**
 * Running templates (the work of the `templates__execute` job): load each template, build
 * its scope from the value layers, render it with the engine, and merge the results of
 * several templates (a generator run) into one output and one set of files.
 *
 * In execute mode every problem is a 422 (values: keyed by variable name; engine errors:
 * keyed by `file:line:column`); in preview mode missing and ill-typed values are warnings.
 */
import type { CommonQueryMethods } from "../db/pool.ts";
import { dict } from "../dict.ts";
import { AppError, invalid, notFound, type FieldErrors } from "../errors.ts";
import { defaultLimits, renderTemplate, TemplateError, formatIssue, type RenderMode, type TemplateIssue, type TemplateLimits } from "../template/index.ts";
import { CaseFolds, caseClash } from "../portablePaths.ts";
import { formsAndReportsScope } from "../forms/templateScope.ts";
import { buildScope, loadSchemaInput } from "./scope.ts";
import { findTemplateInProject, loadFull, savedValues, type FullTemplate } from "./store.ts";

export interface RunRequest {
  mode: RenderMode;
  projectId: number;
  userId: number;
  templateIds: readonly number[];
  /** A generator's schema: the value of schema variables that have none. */
  schemaId: number | null;
  /** A generator's stored values. */
  baseValues: Record<string, unknown>;
  /** The request's values. */
  values: Record<string, unknown>;
}

/** A warning of a preview: where the engine knows a position, it is given. */
export interface RunWarning {
  file: string | null;
  line: number | null;
  column: number | null;
  message: string;
}

export interface RunOutcome {
  output: string;
  files: Record<string, string>;
  warnings: RunWarning[];
  /** The schema the run used (the first resolved schema variable, or the generator's). */
  schemaId: number | null;
  /** The effective values (schema variables as ids), recorded with a generation. */
  values: Record<string, unknown>;
}

/** 422 for an engine error: `errors` keyed by `file:line:column` (prefixed with the template name in multi-template runs). */
export function templateErrorResponse(error: TemplateError, templateName: string | null): AppError {
  const errors: FieldErrors = {};
  for (const issue of error.issues.slice(0, 50)) {
    const key = `${templateName ? `${templateName}: ` : ""}${issue.file}:${issue.line}:${issue.column}`;
    (errors[key] ??= []).push(issue.message);
  }
  const first = error.issues[0];
  return new AppError(422, "template_error", first ? `Template error at ${formatIssue(first)}` : "Template error.", errors);
}

const issueWarning = (issue: TemplateIssue, prefix: string): RunWarning => ({ file: `${prefix}${issue.file}`, line: issue.line, column: issue.column, message: issue.message });

/** The warning that counts those of a render past the ones it lists (see MAX_WARNINGS). */
export const omittedWarning = (count: number, prefix = ""): RunWarning => ({
  file: null,
  line: null,
  column: null,
  message: `${prefix}${count} more warnings of this render are not listed.`,
});

async function loadTemplates(conn: CommonQueryMethods, request: RunRequest): Promise<FullTemplate[]> {
  const templates: FullTemplate[] = [];
  for (const id of request.templateIds) {
    const row = await findTemplateInProject(conn, request.projectId, id, request.userId, true);
    if (!row) throw notFound("Template");
    templates.push(await loadFull(conn, row));
  }
  return templates;
}

/**
 * Renders the templates of `request` in order and merges their results.
 * @throws AppError 422 (values, engine errors, two templates writing one path, two paths that
 * differ only in case), 404 (a template is gone)
 */
export async function runTemplates(conn: CommonQueryMethods, request: RunRequest, limits: Partial<TemplateLimits>): Promise<RunOutcome> {
  const lenient = request.mode === "preview";
  const templates = await loadTemplates(conn, request);
  const several = templates.length > 1;
  const outputs: string[] = [];
  // Keyed by output paths and variable names, which may be `__proto__`: no prototype (see shared/dict.ts).
  const files = dict<string>();
  const writers = new Map<string, string>();
  const folds = new CaseFolds();
  const warnings: RunWarning[] = [];
  const effective = dict<unknown>();
  let schemaId: number | null = null;
  let projectDocs: Awaited<ReturnType<typeof formsAndReportsScope>> | undefined;
  // Each render keeps its output within the limit; so do the renders of a run together.
  const maxOutput = limits.maxOutputBytes ?? defaultLimits.maxOutputBytes;
  let totalOutput = 0;

  for (const template of templates) {
    const prefix = several ? `${template.name}: ` : "";
    const schemaLayer = dict<unknown>();
    if (request.schemaId !== null) for (const v of template.variables) if (v.type === "schema") schemaLayer[v.name] = request.schemaId;
    const layers = [await savedValues(conn, request.projectId, template.id), schemaLayer, request.baseValues, request.values];
    const built = await buildScope(conn, request.projectId, template.variables, layers, lenient);
    if (Object.keys(built.problems).length) {
      if (!lenient) throw invalid(several ? prefixKeys(built.problems, prefix) : built.problems);
      for (const [name, messages] of Object.entries(built.problems)) {
        for (const message of messages) warnings.push({ file: null, line: null, column: null, message: `${prefix}${message} (${name})` });
      }
    }
    if (request.schemaId !== null && built.scope.schema === undefined) {
      // A generator's schema is also `schema` for templates that declare no schema variable.
      const input = await loadSchemaInput(conn, request.projectId, request.schemaId);
      if (input) built.scope.schema = input;
    }
    // The project's forms and reports (shared/forms/templateScope.ts), unless a variable took the name.
    projectDocs ??= await formsAndReportsScope(conn, request.projectId);
    built.scope.forms ??= projectDocs.forms;
    built.scope.reports ??= projectDocs.reports;
    schemaId ??= built.schemaId ?? request.schemaId;
    Object.assign(effective, built.values);

    let result;
    try {
      result = await renderTemplate({ content: template.content, files: template.files, scope: built.scope, mode: request.mode, limits });
    } catch (error) {
      if (error instanceof TemplateError) throw templateErrorResponse(error, several ? template.name : null);
      throw error;
    }
    totalOutput += Object.values(result.files).reduce((sum, content) => sum + content.length, result.output.length);
    if (totalOutput > maxOutput) {
      const message = `The output of the run (all its templates together) grew past ${maxOutput} characters at ${template.name}.`;
      throw new AppError(422, "template_error", message, { files: [message] });
    }
    warnings.push(...result.warnings.map((issue) => issueWarning(issue, prefix)));
    if (result.omittedWarnings > 0) warnings.push(omittedWarning(result.omittedWarnings, prefix));
    if (result.output !== "") outputs.push(result.output);
    for (const [path, content] of Object.entries(result.files)) {
      const earlier = writers.get(path);
      if (earlier !== undefined) {
        const message = `The file ${path} is written by both ${earlier} and ${template.name}.`;
        if (!lenient) throw invalid({ files: [message] });
        warnings.push({ file: path, line: null, column: null, message });
        continue;
      }
      // Paths that differ only in case are one file once unzipped or deployed on macOS or Windows.
      const clash = folds.add(path);
      if (clash !== null) {
        const message = `The file ${path} is refused: ${caseClash(path, clash)}${several ? ` (${writers.get(clash)}, ${template.name})` : ""}.`;
        if (!lenient) throw invalid({ files: [message] });
        warnings.push({ file: path, line: null, column: null, message });
        continue;
      }
      writers.set(path, template.name);
      files[path] = content;
    }
  }
  return { output: outputs.join("\n"), files, warnings, schemaId, values: effective };
}

function prefixKeys(errors: FieldErrors, prefix: string): FieldErrors {
  return Object.fromEntries(Object.entries(errors).map(([key, messages]) => [`${prefix}${key}`, messages]));
}
