/**
 * The per-render object compiled units call as `rt`: missing values (an error in execute
 * mode, a warning and empty text in preview mode), loop lists, limits, `loop` objects,
 * indentation and code blocks.
 */
import type { CodeSite, Site } from "./codegen.ts";
import { fail } from "./errors.ts";
import { indentLines, loopObject } from "./runtime.ts";
import { BlockError, CodeSession } from "./sandbox/session.ts";
import type { RenderMode, TemplateIssue, TemplateLimits } from "./types.ts";

/** What compiled units may call. */
export interface UnitRuntime {
  readonly maxIterations: number;
  readonly maxOutputBytes: number;
  /** Set by a file-name unit: whether every value it inserted was a plain path part. */
  plainName: boolean;
  miss(site: Site): string;
  list(value: unknown, site: Site): unknown[];
  limit(site: Site, iterations: number): never;
  loop(index: number, length: number): ReturnType<typeof loopObject>;
  indent(text: string, indent: string): string;
  code(block: CodeSite, bindings: Record<string, unknown>): Promise<string>;
}

/** The runtime of one render. */
export class RenderRuntime implements UnitRuntime {
  readonly maxIterations: number;
  readonly maxOutputBytes: number;
  readonly warnings: TemplateIssue[] = [];
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
  }

  miss(site: Site): string {
    const message = `\`${site.what}\` is not defined.`;
    if (this.mode === "execute") fail(site.file, site.line, site.column, message);
    this.warnings.push({ file: site.file, line: site.line, column: site.column, message });
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
        : `The output of one file grew past ${this.maxOutputBytes} characters.`;
    return fail(site.file, site.line, site.column, message);
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
    this.session ??= new CodeSession(this.scope, this.limits);
    try {
      return await this.session.run(block, bindings);
    } catch (e) {
      if (this.mode !== "preview" || !(e instanceof BlockError) || e.kind !== "error") throw e;
      this.warnings.push(...e.issues);
      return "";
    }
  }

  /** Ends the render: frees its sandbox session. */
  close(): void {
    this.session?.close();
  }
}
