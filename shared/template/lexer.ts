/**
 * Lexer: splits a source into text, tags (`{:…:}`) and raw code-block bodies, then applies the
 * standalone-tag whitespace rule (as Mustache): a block tag alone on its line, with only spaces
 * or tabs around it, takes its whole line with it, newline included. Placeholders are never
 * standalone, so `{:name:}` on its own line still prints its line.
 */
import type { SourceMap } from "./errors.ts";

/** Plain template text. */
export interface TextToken {
  kind: "text";
  value: string;
}

/** The raw JavaScript between `{:code:}` and `{:codeend:}` (never stripped, so its lines map 1:1). */
export interface CodeToken {
  kind: "code";
  value: string;
  /** Offset of the first character of the code. */
  offset: number;
}

/** One `{:…:}` tag. */
export interface TagToken {
  kind: "tag";
  /** Text between `{:` and `:}`, untrimmed. */
  body: string;
  /** Offset of `{:`. */
  offset: number;
  /** Offset of the first body character. */
  bodyOffset: number;
  /** First word (`for`, `if`, `include`, …) or "" for a placeholder. */
  keyword: string;
  /** Whitespace that preceded a standalone tag on its line ("" otherwise); includes and code blocks indent their output by it. */
  indent: string;
}

/** A token of a source. */
export type Token = TextToken | CodeToken | TagToken;

const blockKeywords = new Set(["for", "endfor", "if", "elseif", "else", "endif", "code", "codeend", "include"]);
const codeEnd = /\{:\s*codeend\s*:\}/g;

/** Offset just past the `:}` closing the tag whose body starts at `from`, skipping quoted strings; -1 if none. */
function tagEnd(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 58 /* : */ && text.charCodeAt(i + 1) === 125 /* } */) return i + 2;
    if (c === 34 /* " */ || c === 39 /* ' */) {
      let j = i + 1;
      while (j < text.length && text.charCodeAt(j) !== c) j += text.charCodeAt(j) === 92 /* \ */ ? 2 : 1;
      if (j >= text.length) return -1;
      i = j;
    }
  }
  return -1;
}

/** The keyword of a tag body: a block keyword, or "" for a placeholder. */
function keywordOf(body: string): string {
  const m = /^\s*([a-z]+)(?=$|[\s:])/.exec(body);
  const word = m?.[1] ?? "";
  return blockKeywords.has(word) ? word : "";
}

/** Tokenizes one source. @throws TemplateError on an unclosed tag or code block. */
export function tokenize(text: string, map: SourceMap): Token[] {
  const tokens: Token[] = [];
  let pos = 0;
  while (pos < text.length) {
    const open = text.indexOf("{:", pos);
    if (open === -1) break;
    if (open > pos) tokens.push({ kind: "text", value: text.slice(pos, open) });
    const end = tagEnd(text, open + 2);
    if (end === -1) map.fail(open, "Tag `{:` is never closed with `:}` (or holds an unterminated string).");
    const body = text.slice(open + 2, end - 2);
    const keyword = keywordOf(body);
    tokens.push({ kind: "tag", body, offset: open, bodyOffset: open + 2, keyword, indent: "" });
    pos = end;
    if (keyword === "code" && body.trim() === "code") {
      codeEnd.lastIndex = pos;
      const close = codeEnd.exec(text);
      if (!close) map.fail(open, "`{:code:}` is never closed with `{:codeend:}`.");
      tokens.push({ kind: "code", value: text.slice(pos, close.index), offset: pos });
      const closeBody = close[0].slice(2, -2);
      tokens.push({ kind: "tag", body: closeBody, offset: close.index, bodyOffset: close.index + 2, keyword: "codeend", indent: "" });
      pos = close.index + close[0].length;
    }
  }
  if (pos < text.length) tokens.push({ kind: "text", value: text.slice(pos) });
  applyStandalone(tokens);
  return tokens;
}

const blank = /^[ \t]*$/;

/** Cuts recorded per text token: keep value.slice(start, end). */
interface Cut {
  start: number;
  end: number;
}

/**
 * Finds standalone block tags on the original texts first, then cuts, so two standalone tags
 * sharing one text token (`{:if a:}\n{:endif:}\n`) both see their own line.
 */
function applyStandalone(tokens: Token[]): void {
  const cuts = new Map<number, Cut>();
  const cutOf = (i: number, token: TextToken) => {
    let cut = cuts.get(i);
    if (!cut) cuts.set(i, (cut = { start: 0, end: token.value.length }));
    return cut;
  };
  for (let i = 0; i < tokens.length; i++) {
    const tag = tokens[i]!;
    if (tag.kind !== "tag" || tag.keyword === "") continue;
    const before = lineBefore(tokens, i);
    const after = lineAfter(tokens, i);
    if (before === null || after === null) continue;
    const prev = tokens[i - 1];
    const next = tokens[i + 1];
    if (prev?.kind === "text") {
      cutOf(i - 1, prev).end = before.cut;
      tag.indent = prev.value.slice(before.cut);
    }
    if (next?.kind === "text") cutOf(i + 1, next).start = after.cut;
  }
  for (const [i, cut] of cuts) {
    const token = tokens[i] as TextToken;
    token.value = token.value.slice(cut.start, Math.max(cut.start, cut.end));
  }
}

/** Where the line of tag `i` starts in the preceding token, if only blanks precede the tag on its line. */
function lineBefore(tokens: Token[], i: number): { cut: number } | null {
  const prev = tokens[i - 1];
  if (!prev) return { cut: 0 };
  if (prev.kind === "tag") return null;
  const nl = prev.value.lastIndexOf("\n");
  if (!blank.test(prev.value.slice(nl + 1))) return null;
  if (nl === -1 && i - 1 !== 0) return null;
  return { cut: nl + 1 };
}

/** Where the line of tag `i` ends in the following token (past its newline), if only blanks follow the tag. */
function lineAfter(tokens: Token[], i: number): { cut: number } | null {
  const next = tokens[i + 1];
  if (!next) return { cut: 0 };
  if (next.kind === "tag") return null;
  const nl = next.value.indexOf("\n");
  const head = nl === -1 ? next.value : next.value.slice(0, nl);
  if (!blank.test(head.endsWith("\r") ? head.slice(0, -1) : head)) return null;
  if (nl === -1 && i + 1 !== tokens.length - 1) return null;
  return { cut: nl === -1 ? next.value.length : nl + 1 };
}
