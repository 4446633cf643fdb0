/**
 * TemplateError: every syntax and runtime problem of a template, with file, line and column.
 */
import type { TemplateIssue } from "./types.ts";

/** Formats an issue as `file:line:column: message`. */
export const formatIssue = (issue: TemplateIssue) => `${issue.file}:${issue.line}:${issue.column}: ${issue.message}`;

/** A template that cannot be compiled or rendered; `issues` holds at least one positioned problem. */
export class TemplateError extends Error {
  readonly issues: TemplateIssue[];

  constructor(issues: TemplateIssue[]) {
    const first = issues[0];
    const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : "";
    super(first ? `${formatIssue(first)}${more}` : "Template error");
    this.name = "TemplateError";
    this.issues = issues;
  }
}

/** Throws a TemplateError for one issue. */
export function fail(file: string, line: number, column: number, message: string): never {
  throw new TemplateError([{ file, line, column, message }]);
}

/** Maps offsets of one source to 1-based lines and columns. */
export class SourceMap {
  readonly file: string;
  private readonly starts: number[];

  constructor(file: string, text: string) {
    this.file = file;
    this.starts = [0];
    for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) this.starts.push(i + 1);
  }

  /** The position of `offset` (binary search over line starts). */
  at(offset: number): { line: number; column: number } {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - this.starts[lo]! + 1 };
  }

  /** Throws a TemplateError at `offset`. */
  fail(offset: number, message: string): never {
    const { line, column } = this.at(offset);
    return fail(this.file, line, column, message);
  }
}
