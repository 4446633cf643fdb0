/**
 * Rendering a compiled template: the main content into `output`, every file (once, or once per
 * element of its `repeat` collection) into `files`, with file names rendered, normalised and
 * checked to stay inside the output root. Partials (`_name.ext`) are only included, never written.
 */
import { compileOrThrow, compileTemplate, type CompiledFile, type CompiledTemplate, type Unit } from "./compile.ts";
import { fail } from "./errors.ts";
import { normalizePath, UnsafePathError } from "./paths.ts";
import { helpers } from "./runtime.ts";
import { RenderRuntime } from "./unitRuntime.ts";
import {
  defaultLimits,
  type CheckResult,
  type PlanResult,
  type RenderInput,
  type RenderMode,
  type RenderResult,
  type TemplateLimits,
  type TemplateSource,
} from "./types.ts";

/** One output file to produce: a file, and for a repeated file the element and its place. */
interface Instance {
  file: CompiledFile;
  element?: unknown;
  index?: number;
  count?: number;
}

/** The instances of every non-partial file, in order. */
function instances(template: CompiledTemplate, scope: Record<string, unknown>, rt: RenderRuntime): Instance[] {
  const out: Instance[] = [];
  for (const file of template.files) {
    if (file.partial) continue;
    if (!file.repeat) {
      out.push({ file });
      continue;
    }
    let value: unknown = scope;
    for (const segment of file.repeat.path.segments) value = helpers.P(value, segment);
    const list = rt.list(value, { file: file.fileName, line: 1, column: 1, what: file.repeat.source });
    list.forEach((element, index) => out.push({ file, element, index, count: list.length }));
  }
  return out;
}

/** Runs a unit, awaiting it only when it holds code blocks. */
async function run(unit: Unit, scope: Record<string, unknown>, rt: RenderRuntime, inst?: Instance): Promise<string> {
  const result = unit.run(scope, rt, inst?.element, inst?.index, inst?.count);
  return typeof result === "string" ? result : await result;
}

/** Output path of an instance, or null (with a warning) when it is unsafe or taken in preview mode. */
function pathOf(inst: Instance, scope: Record<string, unknown>, rt: RenderRuntime, mode: RenderMode, taken: Map<string, string>): string | null {
  const { file } = inst;
  const rendered = file.name.run(scope, rt, inst.element, inst.index, inst.count) as string;
  let problem: string | null = null;
  let path = "";
  try {
    path = normalizePath(rendered);
    const other = taken.get(path);
    if (other !== undefined) problem = `Output path \`${path}\` is produced twice (also by \`${other}\`).`;
  } catch (e) {
    if (!(e instanceof UnsafePathError)) throw e;
    problem = `Output path \`${rendered}\` is refused: ${e.message}.`;
  }
  if (problem === null) {
    taken.set(path, file.fileName);
    return path;
  }
  if (mode === "execute") fail(file.fileName, 1, 1, problem);
  rt.warnings.push({ file: file.fileName, line: 1, column: 1, message: problem });
  return null;
}

const limitsOf = (limits?: Partial<TemplateLimits>): TemplateLimits => ({ ...defaultLimits, ...limits });

/**
 * Renders a template. In `execute` mode a missing value is an error; in `preview` mode it
 * renders empty and is reported in `warnings`.
 * @throws TemplateError (syntax, missing value, code block failure, unsafe or duplicate path)
 */
export async function renderTemplate(input: RenderInput): Promise<RenderResult> {
  const template = compileOrThrow(input);
  const mode = input.mode ?? "execute";
  const rt = new RenderRuntime(input.scope, mode, limitsOf(input.limits));
  try {
    const output = await run(template.content, input.scope, rt);
    const files: Record<string, string> = {};
    const taken = new Map<string, string>();
    for (const inst of instances(template, input.scope, rt)) {
      const path = pathOf(inst, input.scope, rt, mode, taken);
      if (path === null) continue;
      // defineProperty: a file may well be called `__proto__`.
      Object.defineProperty(files, path, { value: await run(inst.file.body, input.scope, rt, inst), enumerable: true, writable: true, configurable: true });
    }
    return { output, files, warnings: rt.warnings };
  } finally {
    rt.close();
  }
}

/**
 * The output paths a render would produce, without rendering file contents (so no code block
 * runs). Missing values and refused paths are warnings in `preview` mode (the default).
 * @throws TemplateError on syntax errors, and in `execute` mode as renderTemplate would
 */
export function planTemplate(input: TemplateSource & { scope: Record<string, unknown>; mode?: RenderMode }): PlanResult {
  const template = compileOrThrow(input);
  const mode = input.mode ?? "preview";
  const rt = new RenderRuntime(input.scope, mode, defaultLimits);
  const taken = new Map<string, string>();
  const paths: string[] = [];
  for (const inst of instances(template, input.scope, rt)) {
    const path = pathOf(inst, input.scope, rt, mode, taken);
    if (path !== null) paths.push(path);
  }
  return { paths, warnings: rt.warnings };
}

/** Checks a template's syntax, includes and repeat paths without rendering it. */
export function checkTemplate(source: TemplateSource): CheckResult {
  const result = compileTemplate(source);
  return result.ok ? { valid: true, errors: [] } : { valid: false, errors: result.issues };
}
