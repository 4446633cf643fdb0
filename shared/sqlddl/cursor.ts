/**
 * A cursor over one statement's tokens with the small vocabulary the recursive-descent
 * parsers share: keywords, punctuation, identifiers (folded as the dialect folds them),
 * qualified names, column lists, and raw expression text taken from the source.
 */
import { lowerCase, Tok, type Token } from "./scanner.ts";
import type { Dialect } from "./types.ts";

/** Thrown when a statement does not have the expected shape; becomes a warning. */
export class SyntaxProblem extends Error {
  readonly offset: number;
  constructor(message: string, offset: number) {
    super(message);
    this.offset = offset;
  }
}

/** A possibly schema-qualified name. */
export interface QualifiedName {
  schema: string | null;
  name: string;
}

/** Words that start a new T-SQL statement in a batch without semicolons. */
export const BATCH_STATEMENT_WORDS = new Set(["CREATE", "ALTER", "DROP", "INSERT", "EXEC", "EXECUTE", "GRANT", "IF", "PRINT", "USE", "DECLARE", "SELECT", "BEGIN"]);

const END: Token = { type: Tok.End, value: "", upper: "", start: 0, end: 0 };

/**
 * Reads one statement's tokens: `tokens[start]` up to (not including) `tokens[end]`. Indexes
 * (`i`, `start`, `end`) are positions in `tokens`, which a T-SQL batch without semicolons
 * shares among its statements: each statement reads on where the one before stopped,
 * without copying the rest of the batch (which made such a batch quadratic).
 */
export class Cursor {
  readonly tokens: Token[];
  readonly text: string;
  readonly dialect: Dialect;
  /** Index of the statement's first token. */
  readonly start: number;
  /** Index just past the statement's last token. */
  readonly end: number;
  i: number;
  /** The End token `peek` returns past the last token, at the end of the last one. */
  private readonly endTok: Token;

  constructor(tokens: Token[], text: string, dialect: Dialect, start = 0, end = tokens.length) {
    this.tokens = tokens;
    this.text = text;
    this.dialect = dialect;
    this.start = start;
    this.end = end;
    this.i = start;
    const at = this.lastEnd();
    this.endTok = at === 0 ? END : { ...END, start: at, end: at };
  }

  // The small readers below are inlined by V8's optimising compilers at every call site (a
  // statement parser has dozens): each reads the token array directly, with no call and no
  // End token to make, which keeps the compiled statement parsers (and the compilers'
  // memory while they work on them) small. Only Word tokens have an `upper`, "" otherwise.

  peek(k = 0): Token {
    const at = this.i + k;
    return at < this.end ? this.tokens[at]! : this.endTok;
  }

  next(): Token {
    const t = this.peek();
    if (this.i < this.end) this.i++;
    return t;
  }

  atEnd(): boolean {
    return this.i >= this.end;
  }

  /** Skips the rest of the statement. */
  drain(): void {
    this.i = this.end;
  }

  /** Offset used for messages: the current token, or the end of the statement. */
  offset(): number {
    return this.peek().start;
  }

  is(word: string, k = 0): boolean {
    const at = this.i + k;
    return at < this.end && this.tokens[at]!.upper === word;
  }

  isAny(words: ReadonlySet<string>, k = 0): boolean {
    const at = this.i + k;
    return at < this.end && this.tokens[at]!.type === Tok.Word && words.has(this.tokens[at]!.upper);
  }

  accept(word: string): boolean {
    const at = this.i;
    if (at >= this.end || this.tokens[at]!.upper !== word) return false;
    this.i = at + 1;
    return true;
  }

  /** Accepts whichever one of the two words comes next. */
  acceptAny(a: string, b: string): boolean {
    return this.accept(a) || this.accept(b);
  }

  /**
   * Accepts the words in sequence, or none of them. Two or three words as parameters, not a
   * rest array: it is called for nearly every column option, and the array was garbage.
   */
  acceptSeq(a: string, b: string, c?: string): boolean {
    if (!this.is(a) || !this.is(b, 1) || (c !== undefined && !this.is(c, 2))) return false;
    this.i += c === undefined ? 2 : 3;
    return true;
  }

  expect(word: string): void {
    if (!this.accept(word)) this.fail(`expected ${word}`);
  }

  isPunct(ch: string, k = 0): boolean {
    const at = this.i + k;
    if (at >= this.end) return false;
    const t = this.tokens[at]!;
    return t.value === ch && t.type === Tok.Punct;
  }

  acceptPunct(ch: string): boolean {
    const at = this.i;
    if (at >= this.end) return false;
    const t = this.tokens[at]!;
    if (t.value !== ch || t.type !== Tok.Punct) return false;
    this.i = at + 1;
    return true;
  }

  expectPunct(ch: string): void {
    if (!this.acceptPunct(ch)) this.fail(`expected "${ch}"`);
  }

  fail(message: string): never {
    const t = this.peek();
    const found = t.type === Tok.End ? "end of statement" : `"${this.text.slice(t.start, Math.min(t.end, t.start + 40))}"`;
    throw new SyntaxProblem(`${message}, found ${found}`, t.type === Tok.End ? this.lastEnd() : t.start);
  }

  /** Whether the next token can be an identifier. */
  isIdent(k = 0): boolean {
    const t = this.peek(k);
    return t.type === Tok.Word || t.type === Tok.Quoted || (t.type === Tok.String && this.dialect === "MySQL");
  }

  /** An identifier: unquoted names fold as the engine folds them (PostgreSQL: lower case). */
  ident(what = "a name"): string {
    const t = this.peek();
    if (t.type === Tok.Word) {
      this.i++;
      return this.dialect === "PostgreSQL" ? lowerCase(t.value) : t.value;
    }
    if (t.type === Tok.Quoted || (t.type === Tok.String && this.dialect === "MySQL")) {
      this.i++;
      return t.value;
    }
    return this.fail(`expected ${what}`);
  }

  /** `a`, `s.a`, `db.s.a` (the last two parts are kept). */
  qualifiedName(what = "a name"): QualifiedName {
    // the last two parts, without an array of all of them
    let schema: string | null = null;
    let name = this.ident(what);
    while (this.isPunct(".") && this.isIdent(1)) {
      this.i++;
      schema = name;
      name = this.ident(what);
    }
    // T-SQL `db..table`: an empty middle part means the default schema
    while (this.isPunct(".") && this.isPunct(".", 1) && this.isIdent(2)) {
      this.i += 2;
      schema = name;
      name = this.ident(what);
    }
    return { schema, name };
  }

  /** `(a [ASC|DESC] [(len)], b, …)`: plain column names of a key. */
  columnList(): string[] {
    this.expectPunct("(");
    if (this.acceptPunct(")")) return [];
    const first = this.keyPart();
    // one column (most keys): an array of one, not one grown by push to room for sixteen
    const columns = this.acceptPunct(",") ? [first, this.keyPart()] : [first];
    while (this.acceptPunct(",")) columns.push(this.keyPart());
    this.expectPunct(")");
    return columns;
  }

  /** One column of a key, and what may follow it. */
  private keyPart(): string {
    const name = this.ident("a column name");
    if (this.isPunct("(")) this.skipGroup(); // MySQL prefix length
    this.skipKeyPartOptions();
    return name;
  }

  /** Skips what may follow a key column: COLLATE x, ASC/DESC, NULLS FIRST/LAST. */
  skipKeyPartOptions(): void {
    for (;;) {
      if (this.accept("COLLATE")) this.qualifiedName("a collation");
      else if (this.accept("NULLS")) this.i++;
      else if (!this.accept("ASC") && !this.accept("DESC")) return;
    }
  }

  /** Skips a parenthesised group starting at the current `(`; returns the inner text. */
  skipGroup(): string {
    const open = this.peek();
    this.expectPunct("(");
    let depth = 1;
    while (!this.atEnd()) {
      const t = this.next();
      if (t.type !== Tok.Punct) continue;
      if (t.value === "(") depth++;
      else if (t.value === ")" && --depth === 0) return this.text.slice(open.end, t.start).trim();
    }
    return this.fail("unbalanced parentheses");
  }

  /**
   * Raw text of an expression that runs until a `,` or `)` at depth 0 or a stop word.
   * `stopWords` are checked only after the first token, so `DEFAULT NULL` keeps NULL.
   */
  expression(stopWords: ReadonlySet<string>): string {
    const first = this.peek();
    if (first.type === Tok.End) this.fail("expected an expression");
    let depth = 0;
    let last = first;
    let count = 0;
    while (!this.atEnd()) {
      const t = this.peek();
      if (t.type === Tok.Punct) {
        if (t.value === "(") depth++;
        else if (t.value === ")") {
          if (depth === 0) break;
          depth--;
        } else if (t.value === "," && depth === 0) break;
      } else if (depth === 0 && count > 0 && t.type === Tok.Word && stopWords.has(t.upper) && !continuesExpression(last, t)) break;
      last = this.next();
      count++;
    }
    if (count === 0) this.fail("expected an expression");
    return this.text.slice(first.start, last.end);
  }

  /** Source text from token index `from` to the token before the cursor. */
  textFrom(from: number): string {
    const a = this.tokens[from];
    const b = this.tokens[this.i - 1];
    return a && b && b.end >= a.start ? this.text.slice(a.start, b.end) : "";
  }

  /** Skips tokens until one of the words (or `,`/`)` at depth 0); returns whether any was skipped. */
  skipUntil(words: ReadonlySet<string>): boolean {
    const from = this.i;
    let depth = 0;
    while (!this.atEnd()) {
      const t = this.peek();
      if (t.type === Tok.Punct) {
        if (t.value === "(") depth++;
        else if (t.value === ")") {
          if (depth === 0) break;
          depth--;
        } else if (t.value === "," && depth === 0) break;
      } else if (depth === 0 && t.type === Tok.Word && words.has(t.upper) && this.i > from) break;
      this.i++;
    }
    return this.i > from;
  }

  /**
   * Skips the rest of the statement; in T-SQL only up to the next statement of the batch
   * (batches need no semicolons), which the caller then parses.
   */
  skipStatement(): void {
    if (this.dialect !== "MSSQL") {
      this.drain();
      return;
    }
    let depth = 0;
    while (!this.atEnd()) {
      const t = this.peek();
      if (t.type === Tok.Punct && t.value === "(") depth++;
      else if (t.type === Tok.Punct && t.value === ")") depth--;
      else if (depth <= 0 && t.type === Tok.Word && BATCH_STATEMENT_WORDS.has(t.upper)) return;
      this.i++;
    }
  }

  private lastEnd(): number {
    return this.tokens[this.end - 1]?.end ?? 0;
  }

}

/** After `::` a word is a type name; `NEXT VALUE FOR` keeps its FOR. */
function continuesExpression(prev: Token, t: Token): boolean {
  return (prev.type === Tok.Punct && prev.value === ":") || (prev.upper === "VALUE" && t.upper === "FOR");
}

/** Integer value of a numeric token, or null. */
export function intValue(t: Token): number | null {
  if (t.type !== Tok.Number) return null;
  const n = Number(t.value);
  return Number.isSafeInteger(n) ? n : null;
}
