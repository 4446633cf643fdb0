/**
 * The per-render object compiled units call as `rt`: missing values (an error in execute
 * mode, a warning and empty text in preview mode), loop lists, limits, `loop` objects,
 * indentation and code blocks.
 */
import type { CodeSite, Site } from "./codegen.ts";
import { fail } from "./errors.ts";
import { indentLines, loopObject } from "./runtime.ts";
import { BlockError, CodeSession } from "./sandbox/session.ts";
import { MAX_WARNINGS, type RenderMode, type TemplateIssue, type TemplateLimits } from "./types.ts";

/** What compiled units may call. */
export interface UnitRuntime {
  readonly maxIterations: number;
  readonly maxOutputBytes: number;
  /** When the render's time budget ends (epoch ms); loops check it now and then. */
  readonly deadline: number;
  /** Set by a file-name unit: whether every value it inserted was a plain path part. */
  plainName: boolean;
  miss(site: Site): string;
  list(value: unknown, site: Site): unknown[];
  /** @throws TemplateError: too many iterations, past the time budget, or too much output */
  limit(site: Site, iterations: number): never;
  loop(index: number, length: number): ReturnType<typeof loopObject>;
  indent(text: string, indent: string): string;
  code(block: CodeSite, bindings: Record<string, unknown>): Promise<string>;
}

/** The runtime of one render. */
export class RenderRuntime implements UnitRuntime {
  readonly maxIterations: number;
  readonly maxOutputBytes: number;
  readonly deadline: number;
  /** The first MAX_WARNINGS warnings of the render. */
  readonly warnings: TemplateIssue[] = [];
  /** How many more there were. */
  omittedWarnings = 0;
  plainName = false;
  private readonly mode: RenderMode;
  private readonly scope: Record<string, unknown>;
  private readonly limits: TemplateLimits;
  private session: CodeSession | null = null;

  constructor(scope: Record<string, unknown>, mode: RenderMode, limits: TemplateLimits) {
    this.scope = scope;
    this.mode = mode;
    this.limits = limits;
    this.maxIterations = limits.maxIterations;
    this.maxOutputBytes = limits.maxOutputBytes;
    // One budget for the whole render: its loops here, its code blocks in the session.
    this.deadline = limits.deadline ?? Date.now() + limits.renderTimeMs;
  }

  miss(site: Site): string {
    const message = `\`${site.what}\` is not defined.`;
    if (this.mode === "execute") fail(site.file, site.line, site.column, message);
    this.warn({ file: site.file, line: site.line, column: site.column, message });
    return "";
  }

  list(value: unknown, site: Site): unknown[] {
    if (Array.isArray(value)) return value;
    if (value === null) return [];
    if (value === undefined) {
      this.miss(site);
      return [];
    }
    return fail(site.file, site.line, site.column, `\`${site.what}\` is not a list (it is ${typeof value === "object" ? "an object" : `a ${typeof value}`}).`);
  }

  limit(site: Site, iterations: number): never {
    const message =
      iterations > this.maxIterations
        ? `More than ${this.maxIterations} loop iterations in one file.`
        : Date.now() > this.deadline
          ? this.overTime()
          : `The output of one file grew past ${this.maxOutputBytes} characters.`;
    return fail(site.file, site.line, site.column, message);
  }

  /** The message of a render past its time budget. */
  overTime(): string {
    return `The render exceeded its total time limit of ${this.limits.renderTimeMs} ms.`;
  }

  /**
   * @throws TemplateError at `file` when the render is past its time budget: checked before
   * every 16th file (or instance of a repeated file), as loops check it every 64 iterations.
   */
  checkTime(file: string): void {
    if (Date.now() > this.deadline) fail(file, 1, 1, this.overTime());
  }

  loop(index: number, length: number) {
    return loopObject(index, length);
  }

  indent(text: string, indent: string): string {
    return indentLines(text, indent);
  }

  /**
   * Runs a code block. In preview mode a block whose code throws (say, on a variable not given)
   * becomes a warning and inserts nothing, as a missing value does; exceeding a limit is still
   * an error in both modes.
   */
  async code(block: CodeSite, bindings: Record<string, unknown>): Promise<string> {
    this.session ??= new CodeSession(this.scope, { ...this.limits, deadline: this.deadline });
    try {
      return await this.session.run(block, bindings);
    } catch (e) {
      if (this.mode !== "preview" || !(e instanceof BlockError) || e.kind !== "error") throw e;
      for (const issue of e.issues) this.warn(issue);
      return "";
    }
  }

  /**
   * Notes a warning of a preview: one per site and occurrence, so a missing value in a loop
   * warned once per iteration (millions of objects, and a job result and a response of
   * hundreds of megabytes); past MAX_WARNINGS they are only counted.
   */
  warn(issue: TemplateIssue): void {
    if (this.warnings.length < MAX_WARNINGS) this.warnings.push(issue);
    else this.omittedWarnings++;
  }

  /** Ends the render: frees its sandbox session. */
  close(): void {
    this.session?.close();
  }
}
