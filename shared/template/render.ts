/**
 * Rendering a compiled template: the main content into `output`, every file (once, or once per
 * element of its `repeat` collection) into `files`, with file names rendered, normalised and
 * checked to stay inside the output root. Partials (`_name.ext`) are only included, never written.
 */
import { compileOrThrow, compileTemplate, type CompiledFile, type Place } from "./compile.ts";
import { fail } from "./errors.ts";
import { CaseFolds, caseClash } from "../portablePaths.ts";
import { normalizePath, UnsafePathError } from "./paths.ts";
import { helpers } from "./runtime.ts";
import { RenderRuntime } from "./unitRuntime.ts";
import {
  CONTENT_FILE,
  defaultLimits,
  type CheckResult,
  type PlanResult,
  type RenderInput,
  type RenderMode,
  type RenderResult,
  type TemplateLimits,
  type TemplateSource,
} from "./types.ts";

/** The elements a repeated file renders once each (its `repeat` collection), or null for a file rendered once. */
function repeatList(file: CompiledFile, scope: Record<string, unknown>, rt: RenderRuntime): unknown[] | null {
  if (!file.repeat) return null;
  let value: unknown = scope;
  for (const segment of file.repeat.path.segments) value = helpers.P(value, segment);
  return rt.list(value, { file: file.fileName, line: 1, column: 1, what: file.repeat.source });
}

/** Output paths already produced, with the file that produced each. */
interface Taken {
  owner(path: string): string | undefined;
  add(path: string, fileName: string): void;
}

/**
 * The output path of one instance named `rendered` (`plain` when its values were plain path
 * parts), or null (with a warning) in preview mode when it is unsafe or already produced.
 * @throws TemplateError in execute mode for the same problems
 */
function placePath(file: CompiledFile, rendered: string, plain: boolean, rt: RenderRuntime, mode: RenderMode, taken: Taken): string | null {
  let problem: string | null = null;
  let path = "";
  try {
    // See generateUnit: plain values in a plain skeleton make a path that needs no normalising.
    path = file.plainSkeleton && plain && rendered.length <= 255 ? rendered : normalizePath(rendered);
    const other = taken.owner(path);
    if (other !== undefined) problem = `Output path \`${path}\` is produced twice (also by \`${other}\`).`;
  } catch (e) {
    if (!(e instanceof UnsafePathError)) throw e;
    problem = `Output path \`${rendered}\` is refused: ${e.message}.`;
  }
  if (problem === null) {
    taken.add(path, file.fileName);
    return path;
  }
  if (mode === "execute") fail(file.fileName, 1, 1, problem);
  rt.warn({ file: file.fileName, line: 1, column: 1, message: problem });
  return null;
}

/** The output path of one instance, as placePath gives it, rendering its name alone. */
function pathOf(file: CompiledFile, element: unknown, index: number, count: number, scope: Record<string, unknown>, rt: RenderRuntime, mode: RenderMode, taken: Taken): string | null {
  const rendered = file.name.run(scope, rt, element, index, count) as string;
  return placePath(file, rendered, rt.plainName, rt, mode, taken);
}

/**
 * Counts a render's output against its limit: `maxOutputBytes` characters for one file (the
 * content or one instance of a file) and for all of them together. Loops check a file as it
 * grows; text without loops and the sum over files are checked here, once a unit has run,
 * since a render of many files or of a long flat text could otherwise grow without bound.
 */
class OutputMeter {
  private total = 0;
  private readonly max: number;

  constructor(max: number) {
    this.max = max;
  }

  /** @throws TemplateError at `file` when `text` or the render's total passes the limit */
  add(file: string, text: string): void {
    if (text.length > this.max) oneFileTooLong(file, this.max);
    this.total += text.length;
    if (this.total > this.max) fail(file, 1, 1, `The output of the render (all its files together) grew past ${this.max} characters.`);
  }

  /** Runs a unit of `file`: a string too long for the engine (a RangeError) is this limit too. */
  run<T>(file: string, unit: () => T): T {
    try {
      return unit();
    } catch (e) {
      return this.tooLong(file, e);
    }
  }

  /** Awaits a unit of `file` that holds code blocks, as `run`. */
  async wait<T>(file: string, result: Promise<T>): Promise<T> {
    try {
      return await result;
    } catch (e) {
      return this.tooLong(file, e);
    }
  }

  /** @throws TemplateError when `error` is a string grown too long for the engine, else `error` */
  tooLong(file: string, error: unknown): never {
    if (error instanceof RangeError && /string length/i.test(error.message)) oneFileTooLong(file, this.max);
    throw error;
  }
}

const oneFileTooLong = (file: string, max: number): never => fail(file, 1, 1, `The output of one file grew past ${max} characters.`);

/** A Taken over a Map (for plans, where there is no files object). */
function takenMap(): Taken {
  const owners = new Map<string, string>();
  return { owner: (path) => owners.get(path), add: (path, fileName) => void owners.set(path, fileName) };
}

const limitsOf = (limits?: Partial<TemplateLimits>): TemplateLimits => ({ ...defaultLimits, ...limits });

/**
 * Renders the instances of a file without code blocks (its unit returns strings), adding the
 * contents of those placed to `contents`; returns `instances` (the render's count of instances
 * so far) advanced by theirs. A synchronous function of its own: in the async
 * renderTemplate every variable of the loop lived in its generator's context, which cost ~450
 * machine instructions a file.
 */
function renderInstances(
  file: CompiledFile,
  list: unknown[] | null,
  scope: Record<string, unknown>,
  rt: RenderRuntime,
  meter: OutputMeter,
  place: Place,
  contents: string[],
  instances: number,
): number {
  const run = file.render.run;
  for (let index = 0, count = list ? list.length : 1; index < count; index++) {
    // Each instance is within its own limits; the render's clock bounds how many of them run.
    // Read every 16 instances: an instance that reads it less often than its loops do (every
    // 64 iterations) runs fewer than 64 iterations, so 16 of them add little past the
    // deadline, while a clock read per instance was ~2 % of a render of small files.
    if ((instances++ & 15) === 0) rt.checkTime(file.fileName);
    // A file rendered once gets no element (its units never read one).
    const element = list ? list[index] : undefined;
    let content: string | null;
    try {
      content = run(scope, rt, element, index, count, place) as string | null;
    } catch (e) {
      return meter.tooLong(file.fileName, e);
    }
    if (content !== null) {
      meter.add(file.fileName, content);
      contents.push(content);
    }
  }
  return instances;
}

/**
 * Renders a template. In `execute` mode a missing value is an error; in `preview` mode it
 * renders empty and is reported in `warnings`.
 * @throws TemplateError (syntax, missing value, code block failure, unsafe or duplicate path)
 */
export async function renderTemplate(input: RenderInput): Promise<RenderResult> {
  const template = compileOrThrow(input);
  const mode = input.mode ?? "execute";
  const scope = input.scope;
  const rt = new RenderRuntime(scope, mode, limitsOf(input.limits));
  const meter = new OutputMeter(rt.maxOutputBytes);
  try {
    const first = meter.run(CONTENT_FILE, () => template.content.run(scope, rt));
    const output = typeof first === "string" ? first : await meter.wait(CONTENT_FILE, first);
    meter.add(CONTENT_FILE, output);
    // In execute mode a duplicate path is an error, so it is enough to notice one as the files
    // are set and look for the culprit then; preview mode keeps the first file and warns, so it
    // checks each path as it goes.
    const taken: Taken = mode === "execute" ? { owner: () => undefined, add: () => undefined } : takenMap();
    // Rendered files are set on the result only once all are rendered: each new path must be
    // looked up in V8's string table as it becomes a property name, and done one after another
    // those lookups hit the processor's caches, where between renders of file bodies they
    // missed (the benchmark's 300-file render took ~10 % less time this way).
    const paths: string[] = [];
    const contents: string[] = [];
    let instances = 0;
    for (const file of template.files) {
      if (file.partial) continue;
      const list = repeatList(file, scope, rt);
      // The file's unit renders its name, places it here, and renders its content only if placed.
      const place: Place = (name, plain) => {
        const path = placePath(file, name, plain, rt, mode, taken);
        if (path !== null) paths.push(path);
        return path;
      };
      if (!file.render.async) {
        instances = renderInstances(file, list, scope, rt, meter, place, contents, instances);
        continue;
      }
      for (let index = 0, count = list ? list.length : 1; index < count; index++) {
        // The clock every 16 instances, as in renderInstances.
        if ((instances++ & 15) === 0) rt.checkTime(file.fileName);
        // A file rendered once gets no element (its units never read one).
        const element = list ? list[index] : undefined;
        const result = meter.run(file.fileName, () => file.render.run(scope, rt, element, index, count, place));
        // Only units with code blocks return promises; an await per file costs more than many files take to render.
        const content = typeof result === "string" || result === null ? result : await meter.wait(file.fileName, result);
        if (content !== null) {
          meter.add(file.fileName, content);
          contents.push(content);
        }
      }
    }
    const files: Record<string, string> = {};
    let twice = false;
    for (let i = 0; i < paths.length; i++) {
      const path = paths[i]!;
      // Only execute mode writes a path twice (see taken); planTemplate then names the culprit.
      if (Object.hasOwn(files, path)) twice = true;
      // A plain assignment to `__proto__` would set the prototype instead of adding a file.
      if (path === "__proto__") Object.defineProperty(files, path, { value: contents[i], enumerable: true, writable: true, configurable: true });
      else files[path] = contents[i]!;
    }
    if (twice) planTemplate({ ...input, mode: "execute" });
    return { output, files, warnings: rt.warnings, omittedWarnings: rt.omittedWarnings };
  } finally {
    rt.close();
  }
}

/**
 * The output paths a render would produce, without rendering file contents (so no code block
 * runs). Missing values and refused paths (paths that differ only in case included) are
 * warnings in `preview` mode (the default).
 * @throws TemplateError on syntax errors, and in `execute` mode as renderTemplate would
 */
export function planTemplate(input: TemplateSource & { scope: Record<string, unknown>; mode?: RenderMode }): PlanResult {
  const template = compileOrThrow(input);
  const mode = input.mode ?? "preview";
  const rt = new RenderRuntime(input.scope, mode, defaultLimits);
  const taken = takenMap();
  // Paths that differ only in case: checked here and once per run over its merged files
  // (shared/templates/run.ts), not per file of a render, where it would cost every render.
  const folds = new CaseFolds();
  const paths: string[] = [];
  for (const file of template.files) {
    if (file.partial) continue;
    const list = repeatList(file, input.scope, rt);
    for (let index = 0, count = list ? list.length : 1; index < count; index++) {
      const path = pathOf(file, list ? list[index] : undefined, index, count, input.scope, rt, mode, taken);
      if (path === null) continue;
      const clash = folds.add(path);
      if (clash === null) {
        paths.push(path);
        continue;
      }
      const problem = `Output path \`${path}\` is refused: ${caseClash(path, clash)}.`;
      if (mode === "execute") fail(file.fileName, 1, 1, problem);
      rt.warn({ file: file.fileName, line: 1, column: 1, message: problem });
    }
  }
  return { paths, warnings: rt.warnings, omittedWarnings: rt.omittedWarnings };
}

/** Checks a template's syntax, includes and repeat paths without rendering it. */
export function checkTemplate(source: TemplateSource): CheckResult {
  const result = compileTemplate(source);
  return result.ok ? { valid: true, errors: [] } : { valid: false, errors: result.issues };
}
