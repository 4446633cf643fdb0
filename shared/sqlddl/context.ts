/**
 * What one parse accumulates besides the schema: warnings located by line and column
 * (capped, so a dump full of INSERTs yields a readable list), statement counters, and the
 * first problem, which names the line and column of the error when nothing was understood.
 */
import type { SchemaBuilder } from "./model.ts";
import type { Dialect, ParseWarning } from "./types.ts";

const MAX_WARNINGS = 1000;
const MAX_PER_KIND = 20;

/** Warnings, counters and line lookup of one parse. */
export class ParseContext {
  readonly text: string;
  readonly dialect: Dialect;
  readonly builder: SchemaBuilder;
  readonly warnings: ParseWarning[] = [];
  understood = 0;
  skipped = 0;
  /** Statements that changed the schema model (tables, keys, types, comments). */
  modelled = 0;
  firstProblem: { offset: number; message: string } | null = null;
  /** Depth of nested T-SQL IF blocks being parsed. */
  nesting = 0;
  /** Offsets where lines start, found on the first `locate` (most files need none). */
  private lineStarts: number[] | null = null;
  private readonly perKind = new Map<string, number>();
  private dropped = 0;

  constructor(text: string, dialect: Dialect, builder: SchemaBuilder) {
    this.text = text;
    this.dialect = dialect;
    this.builder = builder;
  }

  /** 1-based line and column of an offset. */
  locate(offset: number): { line: number; column: number } {
    const starts = (this.lineStarts ??= lineStarts(this.text));
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - starts[lo]! + 1 };
  }

  /** Records a warning; `kind` groups repetitive ones (e.g. every skipped INSERT). */
  warn(offset: number, message: string, kind?: string): void {
    this.firstProblem ??= { offset, message };
    if (kind) {
      const seen = (this.perKind.get(kind) ?? 0) + 1;
      this.perKind.set(kind, seen);
      if (seen > MAX_PER_KIND) return;
    }
    if (this.warnings.length >= MAX_WARNINGS) {
      this.dropped++;
      return;
    }
    this.warnings.push({ ...this.locate(offset), message });
  }

  /** Appends the summaries of grouped and dropped warnings. */
  summarize(): void {
    const end = () => this.locate(this.text.length);
    for (const [kind, seen] of this.perKind) {
      if (seen > MAX_PER_KIND) this.warnings.push({ ...end(), message: `${seen - MAX_PER_KIND} more ${kind} statements skipped` });
    }
    if (this.dropped) this.warnings.push({ ...end(), message: `${this.dropped} more warnings not listed` });
  }
}

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  return starts;
}
