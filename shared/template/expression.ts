/**
 * Expressions inside tags: placeholders (`item.name|pascal`), conditions
 * (`not a and (b == "x" or c >= 2)`) and loop headers (`table in schema.tables`).
 *
 * Precedence, loosest first: `or`, `and`, `not`, comparisons (`==` `!=` `<` `>` `<=` `>=`, not
 * chainable), filters (`|`), then paths, literals and parentheses.
 */
import type { SourceMap } from "./errors.ts";
import { filterNames, filters } from "./filters.ts";

/** A value at a path of the scope: `a.b.0.c`. */
export interface PathExpr {
  type: "path";
  segments: string[];
  offset: number;
}

/** `"text"`, `'text'`, `12`, `-1.5`, `true`, `false`, `null`. */
export interface LiteralExpr {
  type: "literal";
  value: string | number | boolean | null;
  offset: number;
}

/** Comparison operators of conditions. */
export type CompareOp = "==" | "!=" | "<" | ">" | "<=" | ">=";

/** An expression of a placeholder, a condition or a loop header. */
export type Expr =
  | PathExpr
  | LiteralExpr
  | { type: "not"; operand: Expr; offset: number }
  | { type: "logic"; op: "and" | "or"; left: Expr; right: Expr; offset: number }
  | { type: "compare"; op: CompareOp; left: Expr; right: Expr; offset: number }
  | { type: "filter"; name: string; operand: Expr; offset: number };

interface Lexeme {
  kind: "path" | "number" | "string" | "op" | "end";
  text: string;
  offset: number;
  value?: string | number;
}

const segment = "[A-Za-z_$][A-Za-z0-9_$]*";
const pathPattern = new RegExp(`^${segment}(?:\\.(?:${segment}|\\d+))*`);
const numberPattern = /^-?\d+(?:\.\d+)?/;
const opPattern = /^(?:==|!=|<=|>=|<|>|\(|\)|\|)/;
const escapes: Record<string, string> = { n: "\n", t: "\t", r: "\r", "\\": "\\", '"': '"', "'": "'" };

/** Splits a tag body (starting at `base` in the source) into lexemes. */
function lex(body: string, base: number, map: SourceMap): Lexeme[] {
  const out: Lexeme[] = [];
  let i = 0;
  while (i < body.length) {
    const c = body[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const rest = body.slice(i);
    const offset = base + i;
    let m: RegExpExecArray | null;
    if (c === '"' || c === "'") {
      let j = i + 1;
      let value = "";
      while (j < body.length && body[j] !== c) {
        if (body[j] === "\\") {
          const e = body[j + 1] ?? "";
          value += escapes[e] ?? e;
          j += 2;
        } else value += body[j++];
      }
      if (j >= body.length) map.fail(offset, "Unterminated string.");
      out.push({ kind: "string", text: body.slice(i, j + 1), offset, value });
      i = j + 1;
    } else if ((m = numberPattern.exec(rest))) {
      const value = Number(m[0]);
      // Past about 1.8e308 a number is Infinity, which the generated code spelled as JSON's
      // `null`: it printed empty and compared as null. No template needs such a number.
      if (!Number.isFinite(value)) map.fail(offset, `The number \`${m[0].slice(0, 20)}…\` is too large (${m[0].length} digits).`);
      out.push({ kind: "number", text: m[0], offset, value });
      i += m[0].length;
    } else if ((m = pathPattern.exec(rest))) {
      out.push({ kind: "path", text: m[0], offset });
      i += m[0].length;
    } else if ((m = opPattern.exec(rest))) {
      out.push({ kind: "op", text: m[0], offset });
      i += m[0].length;
    } else {
      const hint = c === "!" || c === "&" || c === "=" ? " (use `not`, `and`, `or`, `==`)" : "";
      map.fail(offset, `Unexpected \`${c}\`${hint}.`);
    }
  }
  out.push({ kind: "end", text: "end of tag", offset: base + body.length });
  return out;
}

const keywords = new Set(["and", "or", "not", "true", "false", "null", "in"]);

/**
 * Most operators (`and`, `or`, `not`, `(`, `|`) one tag may hold. An expression is parsed,
 * compiled and evaluated recursively, as deep as it has operators; thousands overflowed the
 * stack (a 500) where a template error is due.
 */
export const MAX_OPERATORS = 100;

/** @throws TemplateError at the first operator past MAX_OPERATORS */
function checkOperators(items: readonly Lexeme[], map: SourceMap): void {
  let count = 0;
  for (const l of items) {
    const operator = l.kind === "op" ? l.text === "(" || l.text === "|" : l.kind === "path" && (l.text === "and" || l.text === "or" || l.text === "not");
    if (operator && ++count > MAX_OPERATORS) map.fail(l.offset, `The expression holds more than ${MAX_OPERATORS} operators (and, or, not, parentheses, filters); it nests too deep.`);
  }
}

/** Recursive-descent parser over the lexemes of one tag. */
class Parser {
  private i = 0;
  private readonly items: Lexeme[];
  private readonly map: SourceMap;

  constructor(items: Lexeme[], map: SourceMap) {
    checkOperators(items, map);
    this.items = items;
    this.map = map;
  }

  private peek(): Lexeme {
    return this.items[this.i]!;
  }

  private isWord(word: string): boolean {
    const l = this.peek();
    return l.kind === "path" && l.text === word;
  }

  private isOp(op: string): boolean {
    const l = this.peek();
    return l.kind === "op" && l.text === op;
  }

  fail(l: Lexeme, message: string): never {
    return this.map.fail(l.offset, message);
  }

  expectEnd(what: string): void {
    const l = this.peek();
    if (l.kind !== "end") this.fail(l, `Unexpected \`${l.text}\` in ${what}.`);
  }

  or(): Expr {
    let left = this.and();
    while (this.isWord("or")) {
      const offset = this.items[this.i++]!.offset;
      left = { type: "logic", op: "or", left, right: this.and(), offset };
    }
    return left;
  }

  private and(): Expr {
    let left = this.not();
    while (this.isWord("and")) {
      const offset = this.items[this.i++]!.offset;
      left = { type: "logic", op: "and", left, right: this.not(), offset };
    }
    return left;
  }

  private not(): Expr {
    if (this.isWord("not")) {
      const offset = this.items[this.i++]!.offset;
      return { type: "not", operand: this.not(), offset };
    }
    return this.compare();
  }

  private compare(): Expr {
    const left = this.filtered(true);
    const l = this.peek();
    if (l.kind === "op" && ["==", "!=", "<", ">", "<=", ">="].includes(l.text)) {
      this.i++;
      const right = this.filtered(true);
      const after = this.peek();
      if (after.kind === "op" && ["==", "!=", "<", ">", "<=", ">="].includes(after.text)) {
        this.fail(after, "Comparisons cannot be chained; use `and`.");
      }
      return { type: "compare", op: l.text as CompareOp, left, right, offset: l.offset };
    }
    return left;
  }

  /** A primary followed by filters; parentheses only where a condition is allowed. */
  filtered(allowGroup: boolean): Expr {
    let expr = this.primary(allowGroup);
    while (this.isOp("|")) {
      this.i++;
      const l = this.peek();
      if (l.kind !== "path" || l.text.includes(".")) this.fail(l, "Expected a filter name after `|`.");
      if (!Object.hasOwn(filters, l.text)) this.fail(l, `Unknown filter \`${l.text}\` (known: ${filterNames.join(", ")}).`);
      this.i++;
      expr = { type: "filter", name: l.text, operand: expr, offset: l.offset };
    }
    return expr;
  }

  private primary(allowGroup: boolean): Expr {
    const l = this.peek();
    if (allowGroup && this.isOp("(")) {
      this.i++;
      const inner = this.or();
      if (!this.isOp(")")) this.fail(this.peek(), "Expected `)`.");
      this.i++;
      return inner;
    }
    if (l.kind === "string" || l.kind === "number") {
      this.i++;
      return { type: "literal", value: l.value!, offset: l.offset };
    }
    if (l.kind === "path") {
      if (l.text === "true" || l.text === "false" || l.text === "null") {
        this.i++;
        return { type: "literal", value: l.text === "null" ? null : l.text === "true", offset: l.offset };
      }
      if (keywords.has(l.text)) this.fail(l, `Expected a value before \`${l.text}\`.`);
      this.i++;
      return { type: "path", segments: l.text.split("."), offset: l.offset };
    }
    return this.fail(l, l.kind === "end" ? "Expected a value." : `Expected a value, found \`${l.text}\`.`);
  }

  /** `name in path` (named) or `path`. */
  loopHeader(): { name: string | null; collection: PathExpr } {
    const first = this.peek();
    const second = this.items[this.i + 1];
    if (first.kind === "path" && !first.text.includes(".") && second?.kind === "path" && second.text === "in") {
      if (keywords.has(first.text) || first.text === "loop") this.fail(first, `\`${first.text}\` cannot name a loop item.`);
      this.i += 2;
      return { name: first.text, collection: this.collection() };
    }
    return { name: null, collection: this.collection() };
  }

  private collection(): PathExpr {
    const l = this.peek();
    if (l.kind !== "path" || keywords.has(l.text)) this.fail(l, "Expected the path of a list to loop over.");
    this.i++;
    this.expectEnd("loop header");
    return { type: "path", segments: l.text.split("."), offset: l.offset };
  }
}

/** Parses a placeholder body: a path or literal, then filters. @throws TemplateError */
export function parsePlaceholder(body: string, base: number, map: SourceMap): Expr {
  const p = new Parser(lex(body, base, map), map);
  const expr = p.filtered(false);
  p.expectEnd("placeholder");
  return expr;
}

/** Parses a condition of `if` or `elseif`. @throws TemplateError */
export function parseCondition(body: string, base: number, map: SourceMap): Expr {
  const p = new Parser(lex(body, base, map), map);
  const expr = p.or();
  p.expectEnd("condition");
  return expr;
}

/** Parses the header of a `for` tag (after the keyword). @throws TemplateError */
export function parseLoopHeader(body: string, base: number, map: SourceMap): { name: string | null; collection: PathExpr } {
  return new Parser(lex(body, base, map), map).loopHeader();
}

/** Parses a path alone (a file's `repeat`). @throws TemplateError */
export function parsePath(body: string, map: SourceMap): PathExpr {
  const p = new Parser(lex(body, 0, map), map);
  const expr = p.filtered(false);
  p.expectEnd("path");
  if (expr.type !== "path") return map.fail(0, "Expected a path such as `schema.tables`.");
  return expr;
}
