/**
 * Classifies one statement by its leading words and hands it to the parser that models it.
 * Every statement ends up as one of three outcomes: modelled (it changed the schema),
 * noise (session settings, ownership, client commands: understood, nothing to keep) or
 * skipped (views, routines, grants, data: reported as a warning with its line).
 */
import { Cursor } from "./cursor.ts";
import { parseAlterTable } from "./alter.ts";
import { parseCreateTable, STATEMENT_WORDS } from "./table.ts";
import {
  parseCommentOn,
  parseCreateDomain,
  parseCreateIndex,
  parseCreateSequence,
  parseCreateType,
  parseDropTable,
  parseExtendedProperty,
  parseGeneratorTrigger,
} from "./objects.ts";
import { Tok, type Token } from "./scanner.ts";
import type { ParseContext } from "./context.ts";

/** What became of a statement. */
export type Outcome = "modelled" | "noise" | "skipped";

/** T-SQL IF blocks nest by recursion: bounded so a hostile input cannot exhaust the stack. */
const MAX_NESTING = 32;

const NOISE = new Set(["SET", "USE", "COMMIT", "ROLLBACK", "START", "LOCK", "UNLOCK", "PRAGMA", "PRINT", "CONNECT", "RAISERROR", "CHECKPOINT", "VACUUM", "ANALYZE", "REINDEX", "DISCARD", "RESET", "SAVEPOINT", "RELEASE", "FLUSH", "INPUT", "OUTPUT", "SHOW"]);
const CREATE_MODIFIERS = new Set(["OR", "REPLACE", "GLOBAL", "LOCAL", "TEMP", "TEMPORARY", "UNLOGGED", "UNIQUE", "CLUSTERED", "NONCLUSTERED", "FULLTEXT", "SPATIAL", "BITMAP", "PRIMARY", "XML", "ASC", "ASCENDING", "DESC", "DESCENDING", "COLUMNSTORE", "RECURSIVE", "MATERIALIZED", "VIRTUAL", "TRUSTED", "PROCEDURAL", "SECURE", "ONLINE", "OFFLINE", "CONSTRAINT"]);
const INDEX_KINDS = new Set(["CLUSTERED", "NONCLUSTERED", "FULLTEXT", "SPATIAL", "BITMAP", "XML", "COLUMNSTORE"]);

/** Dispatches the statement at the cursor. */
export function dispatch(c: Cursor, ctx: ParseContext): Outcome {
  const head = c.peek();
  if (head.type !== Tok.Word) return skip(c, ctx, "statement");
  const word = head.upper;
  if (NOISE.has(word)) {
    if (c.dialect !== "MSSQL") return drain(c);
    c.next(); // a batch without semicolons goes on after it (SET NOCOUNT ON CREATE TABLE …)
    c.skipStatement();
    return "noise";
  }
  if (word === "BEGIN" || word === "END") return c.end - c.start <= 3 ? drain(c) : skip(c, ctx, word);
  switch (word) {
    case "CREATE":
    case "RECREATE":
      return create(c, ctx);
    case "ALTER":
      return alter(c, ctx);
    case "DROP":
      c.next();
      if (c.accept("TABLE")) {
        parseDropTable(c, ctx);
        return "modelled";
      }
      return drain(c);
    case "COMMENT": {
      c.next();
      return parseCommentOn(c, ctx) ? "modelled" : drain(c);
    }
    case "IF":
      if (ctx.dialect === "MSSQL") return conditional(c, ctx);
      break;
    case "EXEC":
    case "EXECUTE":
      if (c.peek(1).value.toLowerCase().endsWith("sp_addextendedproperty") || c.peek(3).value.toLowerCase() === "sp_addextendedproperty") {
        c.next();
        c.qualifiedName();
        return parseExtendedProperty(c, ctx) ? "modelled" : drain(c);
      }
      break;
    case "SELECT":
      if (/^select\s+pg_catalog\.set_config\s*\(/i.test(c.text.slice(head.start, head.start + 40))) return drain(c);
  }
  return skip(c, ctx, word);
}

function create(c: Cursor, ctx: ParseContext): Outcome {
  c.next();
  let unique = false;
  let temporary = false;
  let indexKind: string | null = null;
  for (;;) {
    if (c.accept("DEFINER")) definer(c);
    else if (c.acceptSeq("SQL", "SECURITY") || c.accept("ALGORITHM")) {
      c.acceptPunct("=");
      c.next();
    } else if (c.isAny(CREATE_MODIFIERS) && !(c.is("TEMPORARY") && c.is("TABLESPACE", 1))) {
      const m = c.next().upper;
      if (m === "UNIQUE") unique = true;
      if (m === "TEMP" || m === "TEMPORARY") temporary = true;
      if (INDEX_KINDS.has(m) && indexKind !== "xml") indexKind = m.toLowerCase();
      if (m === "OR") c.next(); // OR REPLACE / OR ALTER
    } else break;
  }
  const kind = c.peek().upper;
  c.next();
  switch (kind) {
    case "TABLE":
      if (temporary) return skip(c, ctx, "CREATE TEMPORARY TABLE", c.i);
      return parseCreateTable(c, ctx) ? "modelled" : "skipped";
    case "INDEX":
      return parseCreateIndex(c, ctx, unique, indexKind) ? "modelled" : "skipped";
    case "SEQUENCE":
    case "GENERATOR":
      parseCreateSequence(c, ctx);
      return "modelled";
    case "DOMAIN":
      parseCreateDomain(c, ctx);
      return "modelled";
    case "TYPE": {
      const from = c.i;
      if (parseCreateType(c, ctx)) return "modelled";
      return skip(c, ctx, "CREATE TYPE", from);
    }
    case "SCHEMA":
    case "DATABASE":
      return drain(c);
    case "TRIGGER":
      if (ctx.dialect === "Firebird") {
        const from = c.i;
        if (parseGeneratorTrigger(c, ctx)) return "modelled";
        c.i = from;
      }
  }
  return skip(c, ctx, `CREATE ${kind}`, c.i);
}

/** MySQL `DEFINER = user@host` or `DEFINER = CURRENT_USER[()]`. */
function definer(c: Cursor): void {
  c.acceptPunct("=");
  c.next();
  if (c.isPunct("(")) c.skipGroup();
  while (c.isPunct("@") || (c.peek().type === Tok.Var && c.peek().value.startsWith("@"))) {
    if (c.next().type === Tok.Punct) c.next();
  }
}

function alter(c: Cursor, ctx: ParseContext): Outcome {
  c.next();
  if (c.accept("TABLE")) return parseAlterTable(c, ctx);
  const kind = c.peek().upper;
  const owner = c.dialect === "PostgreSQL" && ownerTo(c);
  if (owner || ["DATABASE", "SEQUENCE", "SCHEMA", "SESSION", "SYSTEM", "DEFAULT", "EXTENSION", "INDEX"].includes(kind)) return drain(c);
  return skip(c, ctx, `ALTER ${kind}`, c.i + 1);
}

/** Whether the statement is PostgreSQL's `ALTER … OWNER TO …`. */
function ownerTo(c: Cursor): boolean {
  for (let k = c.start; k + 1 < c.end; k++) if (c.tokens[k]!.upper === "OWNER" && c.tokens[k + 1]!.upper === "TO") return true;
  return false;
}

/** T-SQL `IF <condition> [BEGIN] statement … [END]`: the guarded statements are modelled. */
function conditional(c: Cursor, ctx: ParseContext): Outcome {
  if (ctx.nesting >= MAX_NESTING) return skip(c, ctx, `IF nested deeper than ${MAX_NESTING}`);
  c.next();
  let depth = 0;
  while (!c.atEnd()) {
    const t = c.peek();
    if (t.type === Tok.Punct && t.value === "(") depth++;
    else if (t.type === Tok.Punct && t.value === ")") depth--;
    else if (depth === 0 && t.type === Tok.Word && (t.upper === "BEGIN" || (STATEMENT_WORDS.has(t.upper) && t.upper !== "SELECT" && t.upper !== "IF"))) break;
    c.next();
  }
  const block = c.accept("BEGIN");
  let outcome: Outcome = "noise";
  while (!c.atEnd() && !(block && c.is("END")) && !c.is("ELSE")) {
    const start = c.i;
    const inner = new Cursor(c.tokens, c.text, c.dialect, start, nextDelimiter(c, start));
    ctx.nesting++;
    let result: Outcome;
    try {
      result = dispatch(inner, ctx);
    } finally {
      ctx.nesting--;
    }
    if (result === "modelled" || (result === "skipped" && outcome === "noise")) outcome = result;
    c.i = Math.max(inner.i, start + 1);
    if (c.peek().type === Tok.Delim) c.next();
    // Without BEGIN … END an IF guards one statement; in a batch without semicolons the next
    // one is the batch's, not the IF's (reading on nested every later IF one level deeper).
    if (!block) break;
  }
  if (block) c.accept("END");
  if (c.accept("ELSE")) skipBranch(c); // the alternative branch does not run when the guarded one does
  return outcome;
}

/** Skips an IF's ELSE branch: a BEGIN … END block, or one statement. */
function skipBranch(c: Cursor): void {
  if (!c.accept("BEGIN")) {
    c.next(); // the statement's first word, which would stop the skip at once
    c.skipStatement();
    return;
  }
  for (let depth = 1; !c.atEnd() && depth > 0; ) {
    const word = c.next().upper;
    if (word === "BEGIN" || word === "CASE") depth++;
    else if (word === "END") depth--;
  }
}

/**
 * Index of the first delimiter at or after `from` in the statement (its end when none).
 * Remembered per token array: the guarded statements of successive IFs in one batch ask for
 * ever later positions, so the batch is scanned once, not once per IF.
 */
function nextDelimiter(c: Cursor, from: number): number {
  const known = delimiterAfter.get(c.tokens);
  if (known && known.from <= from && from <= known.at) return Math.min(known.at, c.end);
  let at = from;
  while (at < c.end && c.tokens[at]!.type !== Tok.Delim) at++;
  delimiterAfter.set(c.tokens, { from, at });
  return at;
}
const delimiterAfter = new WeakMap<Token[], { from: number; at: number }>();

function drain(c: Cursor): Outcome {
  c.drain();
  return "noise";
}

/**
 * Skips the statement and warns. The label is `kind` plus the object name found at token
 * `nameAt` (e.g. "CREATE VIEW public.v"), or the statement's first two words.
 */
function skip(c: Cursor, ctx: ParseContext, kind: string, nameAt = -1): Outcome {
  const first = c.tokens[c.start]!;
  let label = kind;
  if (nameAt >= 0 && nameAt < c.end && c.tokens[nameAt]?.upper === "IF") nameAt += c.tokens[nameAt + 1]?.upper === "NOT" ? 3 : 2;
  if (nameAt >= 0 && nameAt < c.end) {
    let k = nameAt;
    while (k + 2 < c.end && c.tokens[k + 1]!.value === "." && c.tokens[k + 1]!.type === Tok.Punct) k += 2;
    label += ` ${c.text.slice(c.tokens[nameAt]!.start, c.tokens[k]!.end)}`;
  } else if (nameAt < 0) {
    const second = c.start + 1 < c.end ? c.tokens[c.start + 1] : undefined;
    label = c.text.slice(first.start, (second ?? first).end).replace(/\s+/g, " ");
  }
  ctx.warn(first.start, `skipped ${label.length > 80 ? `${label.slice(0, 77)}...` : label} (not a table definition)`, kind);
  c.drain();
  return "skipped";
}
