/**
 * The tokenizer: one pass over the text, char codes only, one small object per token, which
 * the caller may give back for reuse once it has read it (`recycle`).
 * It knows each dialect's quoting and comment rules and the client commands that dump
 * tools print between statements (psql `\…`, sqlcmd `:setvar` and `GO`, mysql `DELIMITER`),
 * because those are line-oriented and cannot be recognised once the text is tokens.
 *
 * Glossary: Word = unquoted identifier or keyword (`upper` holds its upper-case form);
 * Quoted = quoted identifier (value unescaped, case kept); Delim = the current statement
 * terminator (`;`, or whatever DELIMITER / SET TERM chose); Batch = T-SQL `GO`;
 * Meta = a client command line; Bad = an unterminated string, identifier or comment.
 */
import type { Dialect } from "./types.ts";

/** Token types. */
export const Tok = { End: 0, Word: 1, Quoted: 2, String: 3, Number: 4, Punct: 5, Delim: 6, Batch: 7, Meta: 8, Var: 9, Bad: 10 } as const;
/** One of the token types of `Tok`. */
export type TokType = (typeof Tok)[keyof typeof Tok];

/** One token; `start`/`end` are offsets into the source text. */
export interface Token {
  type: TokType;
  value: string;
  /** Upper-case form of a Word; "" for every other type (`Cursor.is` relies on it). */
  upper: string;
  start: number;
  end: number;
}

const NL = 10;
const isSpace = (c: number) => c === 32 || c === 9 || c === NL || c === 13 || c === 12 || c === 11 || c === 0xfeff || c === 0xa0;
const isDigit = (c: number) => c >= 48 && c <= 57;
const isAlpha = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c >= 128;

/** Produces the tokens of a text, one `next()` at a time. */
export class Scanner {
  readonly text: string;
  readonly dialect: Dialect;
  pos = 0;
  /** Current statement terminator; changed by DELIMITER (MySQL) and SET TERM (Firebird). */
  delimiter = ";";
  private conditional = 0;
  /** Tokens given back by `recycle`, which `make` fills in again. */
  private readonly free: Token[] = [];
  private lineStart = true;
  private readonly mysql: boolean;
  private readonly pg: boolean;
  private readonly mssql: boolean;
  private readonly brackets: boolean;

  constructor(text: string, dialect: Dialect) {
    this.text = text;
    this.dialect = dialect;
    this.mysql = dialect === "MySQL";
    this.pg = dialect === "PostgreSQL";
    this.mssql = dialect === "MSSQL";
    this.brackets = dialect === "MSSQL" || dialect === "SQLite";
  }

  /** The next token (type End at the end of the text). */
  next(): Token {
    this.skipTrivia();
    const { text } = this;
    const start = this.pos;
    if (start >= text.length) return this.make(Tok.End, "", start);
    const c = text.charCodeAt(start);
    if (this.lineStart) {
      this.lineStart = false;
      const command = this.clientCommand(c);
      if (command) return command;
    }
    if (this.delimiter === ";" ? c === 59 : text.startsWith(this.delimiter, start)) {
      this.pos = start + (this.delimiter === ";" ? 1 : this.delimiter.length);
      return this.make(Tok.Delim, this.delimiter, start);
    }
    if (isAlpha(c) || (c === 35 && this.mssql)) return this.word(start); // T-SQL #temp tables
    if (isDigit(c) || (c === 46 && isDigit(text.charCodeAt(start + 1)))) return this.number(start);
    switch (c) {
      case 39: // '
        return this.quoted(start, start + 1, 39, Tok.String);
      case 34: // "
        return this.quoted(start, start + 1, 34, this.mysql ? Tok.String : Tok.Quoted);
      case 96: // `
        return this.quoted(start, start + 1, 96, Tok.Quoted);
      case 91: // [
        if (this.brackets) return this.quoted(start, start + 1, 93, Tok.Quoted);
        break;
      case 36: // $
        return this.dollar(start);
      case 64: // @
        return this.variable(start);
    }
    this.pos = start + 1;
    return this.make(Tok.Punct, text[start]!, start);
  }

  /** PostgreSQL COPY … FROM stdin: the data lines up to `\.` are not SQL. */
  skipCopyData(): void {
    const end = this.text.indexOf("\n\\.", this.pos - 1);
    this.pos = end < 0 ? this.text.length : end + 3;
  }

  /**
   * Gives tokens back for reuse: the caller no longer reads them (a finished statement's,
   * a terminator). Every token was one short-lived object, ~3 MB of garbage for a 0.3 MB dump.
   */
  recycle(token: Token): void {
    this.free.push(token);
  }

  private make(type: TokType, value: string, start: number, upper = ""): Token {
    const t = this.free.pop();
    if (t === undefined) return { type, value, upper, start, end: this.pos };
    t.type = type;
    t.value = value;
    t.upper = upper;
    t.start = start;
    t.end = this.pos;
    return t;
  }

  private skipTrivia(): void {
    const { text } = this;
    const n = text.length;
    let i = this.pos;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (isSpace(c)) {
        if (c === NL) this.lineStart = true;
        i++;
      } else if (c === 45 && text.charCodeAt(i + 1) === 45 && (!this.mysql || i + 2 >= n || isSpace(text.charCodeAt(i + 2)))) {
        const eol = text.indexOf("\n", i);
        i = eol < 0 ? n : eol;
      } else if (c === 35 && this.mysql) {
        const eol = text.indexOf("\n", i);
        i = eol < 0 ? n : eol;
      } else if (c === 47 && text.charCodeAt(i + 1) === 42) {
        const after = this.blockComment(i);
        if (after < 0) break; // unterminated: next() reports it
        i = after;
      } else if (c === 42 && this.conditional > 0 && text.charCodeAt(i + 1) === 47) {
        this.conditional--;
        i += 2;
      } else break;
    }
    this.pos = i;
  }

  /** Skips a block comment at `i`; returns the offset after it, -1 when unterminated. */
  private blockComment(i: number): number {
    const { text } = this;
    if (this.mysql && (text.charCodeAt(i + 2) === 33 || (text.charCodeAt(i + 2) === 77 && text.charCodeAt(i + 3) === 33))) {
      // /*!40101 … */ and /*M!100101 … */ hold code a MySQL/MariaDB server runs
      let j = i + (text.charCodeAt(i + 2) === 33 ? 3 : 4);
      while (isDigit(text.charCodeAt(j))) j++;
      if (text.charCodeAt(j) !== 92) {
        this.conditional++;
        return j;
      }
      // a client command inside (mariadb-dump's `/*M!999999\- enable the sandbox mode */`)
    }
    if (!this.pg) {
      const end = text.indexOf("*/", i + 2);
      return end < 0 ? -1 : end + 2;
    }
    let depth = 0; // PostgreSQL block comments nest
    for (let j = i; j < text.length - 1; j++) {
      const c = text.charCodeAt(j);
      if (c === 47 && text.charCodeAt(j + 1) === 42) {
        depth++;
        j++;
      } else if (c === 42 && text.charCodeAt(j + 1) === 47) {
        depth--;
        j++;
        if (depth === 0) return j + 1;
      }
    }
    return -1;
  }

  /** Offset of the end of the line at `start` (its newline, or the end of the text). */
  private eol(start: number): number {
    const e = this.text.indexOf("\n", start);
    return e < 0 ? this.text.length : e;
  }

  private clientCommand(c: number): Token | null {
    const { text } = this;
    const start = this.pos;
    // asked at every line start: no closure (this was one per line), no slice unless the line can be a command
    if (this.pg && c === 92) {
      this.pos = this.eol(start);
      return this.make(Tok.Meta, text.slice(start, this.pos).trim(), start);
    }
    if (this.mssql && c === 58 && isAlpha(text.charCodeAt(start + 1))) {
      this.pos = this.eol(start);
      return this.make(Tok.Meta, text.slice(start, this.pos).trim(), start);
    }
    if (this.mssql && (c === 71 || c === 103) && (text.charCodeAt(start + 1) | 32) === 111) {
      const rest = text.slice(start + 2, this.eol(start));
      if (/^\s*(\d+\s*)?(--.*)?$/.test(rest)) {
        this.pos = this.eol(start);
        return this.make(Tok.Batch, "GO", start);
      }
    }
    if (this.mysql && (c === 68 || c === 100) && /^delimiter\s/i.test(text.slice(start, start + 10))) {
      this.pos = this.eol(start);
      const chosen = text.slice(start + 9, this.pos).trim().split(/\s+/)[0];
      if (chosen) this.delimiter = chosen;
      return this.make(Tok.Meta, `DELIMITER ${chosen ?? ""}`, start);
    }
    return null;
  }

  private word(start: number): Token {
    const { text } = this;
    const n = text.length;
    let i = start + 1;
    const custom = this.delimiter !== ";" ? this.delimiter : null;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (isAlpha(c) || isDigit(c) || c === 36 || (c === 35 && this.mssql)) {
        if (custom !== null && c === custom.charCodeAt(0) && text.startsWith(custom, i)) break;
        i++;
      } else break;
    }
    // string prefixes: N'…' (national), E'…' (escapes), X'…'/B'…' (hex/bit), U&'…'
    const next = text.charCodeAt(i);
    if (next === 39 && i - start === 1) {
      const p = text.charCodeAt(start) | 32;
      if (p === 110 || p === 101 || p === 120 || p === 98) return this.quoted(start, i + 1, 39, Tok.String, p === 101 || this.mysql);
    }
    if (next === 38 && i - start === 1 && (text.charCodeAt(start) | 32) === 117 && text.charCodeAt(i + 1) === 39) {
      return this.quoted(start, i + 2, 39, Tok.String);
    }
    this.pos = i;
    const value = text.slice(start, i);
    return this.make(Tok.Word, value, start, value.toUpperCase());
  }

  private number(start: number): Token {
    const { text } = this;
    let i = start;
    if (text.charCodeAt(i) === 48 && (text.charCodeAt(i + 1) | 32) === 120) {
      i += 2;
      while (/[0-9a-fA-F]/.test(text[i] ?? "")) i++;
    } else {
      while (isDigit(text.charCodeAt(i))) i++;
      if (text.charCodeAt(i) === 46 && text.charCodeAt(i + 1) !== 46) {
        i++;
        while (isDigit(text.charCodeAt(i))) i++;
      }
      if ((text.charCodeAt(i) | 32) === 101) {
        let j = i + 1;
        if (text.charCodeAt(j) === 43 || text.charCodeAt(j) === 45) j++;
        if (isDigit(text.charCodeAt(j))) {
          i = j;
          while (isDigit(text.charCodeAt(i))) i++;
        }
      }
    }
    this.pos = i;
    return this.make(Tok.Number, text.slice(start, i), start);
  }

  /** A quoted string or identifier whose body starts at `from`; doubled quotes escape. */
  private quoted(start: number, from: number, quote: number, type: TokType, backslash = this.mysql): Token {
    const { text } = this;
    const n = text.length;
    let i = from;
    let value = "";
    let chunk = from;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === quote) {
        if (text.charCodeAt(i + 1) === quote) {
          value += text.slice(chunk, i + 1);
          i += 2;
          chunk = i;
          continue;
        }
        value += text.slice(chunk, i);
        this.pos = i + 1;
        return this.make(type, value, start);
      }
      if (c === 92 && backslash && quote !== 93 && quote !== 96) {
        value += text.slice(chunk, i) + unescape(text[i + 1] ?? "");
        i += 2;
        chunk = i;
        continue;
      }
      i++;
    }
    this.pos = n;
    return this.make(Tok.Bad, `unterminated ${type === Tok.String ? "string" : "quoted identifier"}`, start);
  }

  private dollar(start: number): Token {
    const { text } = this;
    if (this.mssql && text.charCodeAt(start + 1) === 40) {
      const close = text.indexOf(")", start);
      if (close > 0) {
        this.pos = close + 1; // sqlcmd variable $(Name)
        const value = text.slice(start, this.pos);
        return this.make(Tok.Word, value, start, value.toUpperCase());
      }
    }
    if (this.pg) {
      const tag = /^\$(?:[A-Za-z_\u0080-\uffff][\w\u0080-\uffff]*)?\$/.exec(text.slice(start, start + 64));
      if (tag) {
        const close = text.indexOf(tag[0], start + tag[0].length);
        if (close < 0) {
          this.pos = text.length;
          return this.make(Tok.Bad, "unterminated dollar-quoted string", start);
        }
        this.pos = close + tag[0].length;
        return this.make(Tok.String, text.slice(start + tag[0].length, close), start);
      }
      let i = start + 1;
      while (isDigit(text.charCodeAt(i))) i++;
      if (i > start + 1) {
        this.pos = i;
        return this.make(Tok.Var, text.slice(start, i), start);
      }
    }
    this.pos = start + 1;
    return this.make(Tok.Punct, "$", start);
  }

  private variable(start: number): Token {
    const { text } = this;
    let i = start + 1;
    if (text.charCodeAt(i) === 64) i++;
    const from = i;
    while (i < text.length && (isAlpha(text.charCodeAt(i)) || isDigit(text.charCodeAt(i)) || text.charCodeAt(i) === 36)) i++;
    this.pos = i;
    return i > from ? this.make(Tok.Var, text.slice(start, i), start) : this.make(Tok.Punct, "@", start);
  }
}

function unescape(ch: string): string {
  switch (ch) {
    case "n":
      return "\n";
    case "t":
      return "\t";
    case "r":
      return "\r";
    case "0":
      return "\0";
    default:
      return ch;
  }
}

/**
 * `s.toLowerCase()`, but `s` itself when it has no upper-case ASCII letter and is all ASCII.
 * V8's toLowerCase makes a new string even when nothing changes (toUpperCase does not), and
 * names are looked up in lower case once or twice per column.
 */
export function lowerCase(s: string): string {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c >= 65 && c <= 90) || c >= 128) return s.toLowerCase();
  }
  return s;
}
