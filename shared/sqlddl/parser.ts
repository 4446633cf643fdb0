/**
 * `parseDdl`: the entry point. Rejects what cannot be SQL (empty, binary), splits the text
 * into statements as the dialect's client would, models each statement (a statement it
 * cannot understand is a warning, never a failure of the file), and throws only when not
 * one statement was modelled, naming the line and column of the first problem.
 */
import { Cursor, SyntaxProblem } from "./cursor.ts";
import { ParseContext } from "./context.ts";
import { dispatch, type Outcome } from "./dispatch.ts";
import { DdlParseError } from "./errors.ts";
import { finalizeSchema } from "./finalize.ts";
import { SchemaBuilder } from "./model.ts";
import { Tok } from "./scanner.ts";
import { splitStatements, type Statement } from "./statements.ts";
import { STATEMENT_WORDS } from "./table.ts";
import type { Dialect, ParseResult } from "./types.ts";

/** Limits that keep a hostile input from holding a worker. */
export interface ParseOptions {
  /** Give up (DdlParseError) after this long; default 30 s. */
  maxMs?: number;
}

const RESUME_WORDS = new Set(["CREATE", "ALTER", "EXEC", "EXECUTE", "INSERT", "GRANT", "DROP"]);

/**
 * Parses DDL text of one dialect into the schema model.
 * @throws DdlParseError when the input is empty or binary, or nothing in it was understood.
 */
export function parseDdl(sqlText: string, dialect: Dialect, options: ParseOptions = {}): ParseResult {
  checkInput(sqlText);
  const builder = new SchemaBuilder(dialect);
  const ctx = new ParseContext(sqlText, dialect, builder);
  const deadline = Date.now() + (options.maxMs ?? 30_000);
  splitStatements(sqlText, dialect, (statement) => {
    if (Date.now() > deadline) {
      const at = ctx.locate(statement.start);
      throw new DdlParseError("The SQL took too long to parse", at.line, at.column);
    }
    handle(statement, ctx);
  });
  if (ctx.modelled === 0) {
    const problem = ctx.firstProblem;
    const at = ctx.locate(problem?.offset ?? 0);
    throw new DdlParseError(problem ? `No table definition was understood; first problem: ${problem.message}` : "No table definition was found", at.line, at.column);
  }
  ctx.summarize();
  return { schema: finalizeSchema(builder), warnings: ctx.warnings, statements: { understood: ctx.understood, skipped: ctx.skipped } };
}

function checkInput(text: string): void {
  if (text.trim().replace(/^\uFEFF/, "") === "") throw new DdlParseError("The SQL text is empty", 1, 1);
  const sample = text.slice(0, 65536);
  const isControl = (c: number) => (c < 32 && c !== 9 && c !== 10 && c !== 13 && c !== 12) || c === 0xfffd;
  let control = 0;
  let first = -1;
  for (let i = 0; i < sample.length; i++) {
    if (!isControl(sample.charCodeAt(i))) continue;
    control++;
    if (first < 0) first = i;
  }
  const nul = sample.indexOf("\0");
  if (nul >= 0 || control > sample.length / 100) {
    const at = nul >= 0 ? nul : first;
    const before = text.slice(0, Math.max(at, 0));
    const line = before.split("\n").length;
    throw new DdlParseError("The input looks binary, not SQL text", line, Math.max(at, 0) - before.lastIndexOf("\n"));
  }
}

function handle(statement: Statement, ctx: ParseContext): void {
  if (statement.bad) ctx.warn(statement.bad.start, statement.bad.value);
  if (statement.meta !== null) {
    ctx.understood++;
    return;
  }
  const tokens = statement.tokens;
  if (tokens.length === 0) {
    if (statement.bad) ctx.skipped++;
    return;
  }
  if (statement.truncated) {
    ctx.warn(statement.start, "skipped a statement too long to model");
    ctx.skipped++;
    return;
  }
  let from = 0;
  while (from < tokens.length) {
    // T-SQL: the next statement of a batch without semicolons reads on in the same tokens
    const c = new Cursor(tokens, ctx.text, ctx.dialect, from);
    let outcome: Outcome;
    try {
      outcome = dispatch(c, ctx);
    } catch (error) {
      if (!(error instanceof SyntaxProblem)) throw error;
      const head = ctx.text.slice(tokens[from]!.start, tokens[Math.min(from + 3, tokens.length - 1)]!.end).split("(")[0]!.replace(/\s+/g, " ");
      ctx.warn(error.offset, `could not understand ${head}: ${error.message}`, "unparsable");
      record(ctx, "skipped");
      if (ctx.dialect !== "MSSQL") return;
      let next = Math.max(c.i, from) + 1;
      while (next < tokens.length && !(tokens[next]!.type === Tok.Word && RESUME_WORDS.has(tokens[next]!.upper))) next++;
      if (next >= tokens.length) return;
      from = next;
      continue;
    }
    record(ctx, outcome);
    if (c.atEnd()) return;
    if (ctx.dialect === "MSSQL" && c.isAny(STATEMENT_WORDS)) {
      from = c.i; // T-SQL batches need no semicolons between statements
      continue;
    }
    ctx.warn(c.offset(), `ignored text after the statement: "${ctx.text.slice(c.peek().start, c.peek().start + 40)}"`);
    return;
  }
}

function record(ctx: ParseContext, outcome: Outcome): void {
  if (outcome === "skipped") ctx.skipped++;
  else ctx.understood++;
  if (outcome === "modelled") ctx.modelled++;
}
