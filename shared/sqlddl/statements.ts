/**
 * Splits the token stream into statements the way each dialect's own client does:
 * on the current terminator (`;`, a DELIMITER choice, a SET TERM choice), on T-SQL `GO`,
 * and not inside the BEGIN … END body of a trigger or routine whose inner statements end
 * with `;` (SQLite triggers, T-SQL blocks, PostgreSQL BEGIN ATOMIC). A T-SQL routine runs
 * to the end of its batch, as sqlcmd sends it.
 */
import { Scanner, Tok, type Token } from "./scanner.ts";
import type { Dialect } from "./types.ts";

/** One statement: its tokens (without terminator) and where it sits in the text. */
export interface Statement {
  tokens: Token[];
  start: number;
  /** Set when the statement was too long to keep every token. */
  truncated: boolean;
  /** Client command line (psql `\…`, sqlcmd `:…`, DELIMITER) instead of SQL. */
  meta: string | null;
  /** Where an unterminated string, identifier or comment began. */
  bad: Token | null;
}

/** Beyond this many tokens a statement is kept only as far as its head. */
export const MAX_STATEMENT_TOKENS = 400_000;

/** What the reused buffer holds where a finished statement's tokens were. */
const END: Token = { type: Tok.End, value: "", upper: "", start: 0, end: 0 };

const ROUTINES = new Set(["TRIGGER", "PROCEDURE", "PROC", "FUNCTION", "EVENT", "PACKAGE", "VIEW"]);
const NOT_A_BLOCK = new Set(["TRAN", "TRANSACTION", "WORK", "DISTRIBUTED", "DEFERRED", "IMMEDIATE", "EXCLUSIVE"]);
const NOT_A_BLOCK_END = new Set(["IF", "LOOP", "WHILE", "REPEAT", "FOR"]);

/** Calls `onStatement` for each statement of `text`, in order. */
export function splitStatements(text: string, dialect: Dialect, onStatement: (statement: Statement) => void): void {
  const scanner = new Scanner(text, dialect);
  // The statement's tokens gather in one buffer that every statement reuses; each statement
  // gets an exact-size copy. Growing a fresh array per statement allocated about three times
  // its final size (most of it garbage at once) for every statement of the file.
  const buffer: Token[] = [];
  let count = 0;
  let truncated = false;
  let bad: Token | null = null;
  let depth = 0;
  let tracking = false; // inside a routine/trigger: count BEGIN … END
  let wholeBatch = false; // T-SQL routine: ends only at GO
  let pendingBegin = false;
  let pendingEnd = false;

  const flush = () => {
    if (count > 0 || bad) {
      const tokens = buffer.slice(0, count);
      onStatement({ tokens, start: tokens[0]?.start ?? bad?.start ?? 0, truncated, meta: null, bad });
      afterStatement(scanner, tokens, dialect);
    }
    // The statement has been read: its tokens go back to the scanner, and none of them stays
    // reachable through the buffer, which the next statement overwrites.
    for (let k = 0; k < count; k++) {
      scanner.recycle(buffer[k]!);
      buffer[k] = END;
    }
    if (bad) scanner.recycle(bad);
    count = 0;
    truncated = false;
    bad = null;
    depth = 0;
    tracking = false;
    wholeBatch = false;
    pendingBegin = false;
    pendingEnd = false;
  };

  for (;;) {
    const tok = scanner.next();
    if (pendingBegin || pendingEnd) {
      const word = tok.type === Tok.Word ? tok.upper : "";
      if (pendingBegin && !NOT_A_BLOCK.has(word) && tok.type !== Tok.Delim) depth++;
      if (pendingEnd && !NOT_A_BLOCK_END.has(word) && depth > 0) depth--;
      pendingBegin = pendingEnd = false;
    }
    if (tok.type === Tok.End) {
      flush();
      return;
    }
    if (tok.type === Tok.Meta) {
      flush();
      onStatement({ tokens: [], start: tok.start, truncated: false, meta: tok.value, bad: null });
      scanner.recycle(tok);
      continue;
    }
    if (tok.type === Tok.Batch) {
      flush();
      scanner.recycle(tok);
      continue;
    }
    if (tok.type === Tok.Delim && !wholeBatch && (depth === 0 || scanner.delimiter !== ";")) {
      flush();
      scanner.recycle(tok);
      continue;
    }
    if (tok.type === Tok.Bad) {
      if (bad) scanner.recycle(bad); // the last one is reported
      bad = tok;
      continue;
    }
    if (count < MAX_STATEMENT_TOKENS) buffer[count++] = tok;
    else truncated = true;
    if (count <= 12 && tok.type === Tok.Word) {
      if (!tracking && startsBlockStatement(buffer, count, dialect)) {
        tracking = true;
        wholeBatch = dialect === "MSSQL" && buffer[0]!.upper === "CREATE";
      }
    }
    if (tracking && tok.type === Tok.Word) {
      if (tok.upper === "BEGIN") pendingBegin = true;
      else if (tok.upper === "CASE") depth++;
      else if (tok.upper === "END") pendingEnd = true;
    }
  }
}

/** Whether the statement so far (the first `count` tokens) is a routine, trigger or T-SQL control block. */
function startsBlockStatement(tokens: Token[], count: number, dialect: Dialect): boolean {
  const first = tokens[0]!.upper;
  if (dialect === "MSSQL" && (first === "IF" || first === "WHILE" || first === "BEGIN") && count === 1) return true;
  if (dialect === "Firebird" && first === "EXECUTE" && count > 1 && tokens[1]!.upper === "BLOCK") return true;
  if (first !== "CREATE" && first !== "ALTER") return false;
  const second = count > 1 ? tokens[1]!.upper : undefined;
  if (second === "TABLE" || second === "INDEX" || second === "UNIQUE") return false;
  for (let k = 0; k < count; k++) if (tokens[k]!.type === Tok.Punct && tokens[k]!.value === "(") return false;
  const last = tokens[count - 1]!;
  if (!ROUTINES.has(last.upper)) return false;
  // a VIEW has no body blocks except in T-SQL, where it must still run to the end of the batch
  return last.upper !== "VIEW" || dialect === "MSSQL";
}

/** Client-side effects of a finished statement: SET TERM, and COPY data that follows. */
function afterStatement(scanner: Scanner, tokens: Token[], dialect: Dialect): void {
  const first = tokens[0];
  if (!first || first.type !== Tok.Word) return;
  if (dialect === "Firebird" && first.upper === "SET" && tokens[1]?.upper === "TERM" && tokens.length > 2) {
    const term = scanner.text.slice(tokens[2]!.start, tokens[tokens.length - 1]!.end).trim();
    if (term) scanner.delimiter = term;
  } else if (dialect === "PostgreSQL" && first.upper === "COPY") {
    const last = tokens[tokens.length - 1];
    if (tokens.some((t) => t.upper === "STDIN") && last) scanner.skipCopyData();
  }
}
