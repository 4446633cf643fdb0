/**
 * Parser: tokens → tree of nodes. Blocks must nest: a closing tag that does not match the
 * innermost open block, or a block left open at the end, is a syntax error that names both
 * positions.
 */
import { fail, SourceMap } from "./errors.ts";
import { parseCondition, parseLoopHeader, parsePlaceholder, type Expr, type PathExpr } from "./expression.ts";
import { tokenize, type TagToken } from "./lexer.ts";
import { normalizePath } from "./paths.ts";

/** Where a node starts. */
export interface Pos {
  file: string;
  line: number;
  column: number;
}

/** A node of the template tree (an include's `nodes` are filled in by resolveIncludes). */
export type Node =
  | { type: "text"; value: string }
  | { type: "output"; expr: Expr; pos: Pos; source: string }
  | { type: "for"; name: string | null; collection: PathExpr; body: Node[]; pos: Pos; source: string }
  | { type: "if"; branches: { cond: Expr; body: Node[] }[]; otherwise: Node[] | null; pos: Pos }
  | { type: "code"; source: string; pos: Pos; codePos: Pos; indent: string }
  | { type: "include"; path: string; indent: string; pos: Pos; nodes?: Node[] };

/**
 * Deepest nesting of blocks (`for`, `if`) and includes in one template. Compiling and running
 * a tree walks it recursively; thousands of levels overflowed the stack (a 500) where a
 * template error is due. No real template comes near this.
 */
export const MAX_NESTING = 100;

/** A block still open while parsing. */
interface Open {
  tag: string;
  pos: Pos;
  node: Extract<Node, { type: "for" | "if" }>;
  body: Node[];
  sawElse: boolean;
}

/** Parses one source into nodes. @throws TemplateError with file, line and column. */
export function parse(text: string, file: string, options: { placeholdersOnly?: boolean } = {}): Node[] {
  const map: SourceMap = new SourceMap(file, text);
  const tokens = tokenize(text, map);
  const root: Node[] = [];
  const stack: Open[] = [];
  const target = () => stack.at(-1)?.body ?? root;
  const posOf = (offset: number): Pos => ({ file, ...map.at(offset) });

  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.kind === "text") {
      if (token.value) target().push({ type: "text", value: token.value });
      continue;
    }
    if (token.kind === "code") continue;
    const pos = posOf(token.offset);
    const describe = `\`{:${token.body.trim()}:}\``;
    if (options.placeholdersOnly && token.keyword) map.fail(token.offset, `${describe} is not allowed here: only placeholders are.`);
    switch (token.keyword) {
      case "": {
        target().push({ type: "output", expr: parsePlaceholder(token.body, token.bodyOffset, map), pos, source: token.body.trim() });
        break;
      }
      case "for": {
        tooDeep(stack, token.offset, map);
        const { rest, offset } = afterKeyword(token, "for");
        const header = parseLoopHeader(rest, offset, map);
        const node: Node = { type: "for", ...header, body: [], pos, source: rest.trim() };
        target().push(node);
        stack.push({ tag: "for", pos, node, body: node.body, sawElse: false });
        break;
      }
      case "if": {
        tooDeep(stack, token.offset, map);
        const { rest, offset } = afterKeyword(token, "if");
        const node: Node = { type: "if", branches: [{ cond: parseCondition(rest, offset, map), body: [] }], otherwise: null, pos };
        target().push(node);
        stack.push({ tag: "if", pos, node, body: node.branches[0]!.body, sawElse: false });
        break;
      }
      case "elseif":
      case "else": {
        const open = stack.at(-1);
        if (!open || open.tag !== "if") map.fail(token.offset, `${describe} outside of \`{:if:}\`${openedNote(open)}.`);
        if (open.sawElse) map.fail(token.offset, `${describe} after \`{:else:}\`.`);
        const node = open.node as Extract<Node, { type: "if" }>;
        const { rest, offset } = afterKeyword(token, token.keyword);
        if (token.keyword === "else") {
          if (rest.trim()) map.fail(offset, "`{:else:}` takes no condition (use `{:elseif …:}`).");
          open.sawElse = true;
          open.body = node.otherwise = [];
        } else {
          const branch = { cond: parseCondition(rest, offset, map), body: [] as Node[] };
          node.branches.push(branch);
          open.body = branch.body;
        }
        break;
      }
      case "endfor":
      case "endif": {
        const opener = token.keyword.slice(3);
        const open = stack.pop();
        if (afterKeyword(token, token.keyword).rest.trim()) map.fail(token.offset, `${describe}: \`{:${token.keyword}:}\` takes nothing.`);
        if (!open) map.fail(token.offset, `${describe} without a matching \`{:${opener} …:}\`.`);
        if (open.tag !== opener) map.fail(token.offset, `${describe} closes \`{:${open.tag} …:}\` opened at line ${open.pos.line}, column ${open.pos.column}.`);
        break;
      }
      case "code": {
        const code = tokens[i + 1];
        if (token.body.trim() !== "code" || code?.kind !== "code") map.fail(token.offset, `${describe}: write \`{:code:}\` alone and the code after it.`);
        target().push({ type: "code", source: code.value, pos, codePos: posOf(code.offset), indent: token.indent });
        i += 2;
        break;
      }
      case "codeend":
        map.fail(token.offset, "`{:codeend:}` without a matching `{:code:}`.");
        break;
      case "include": {
        const { rest, offset } = afterKeyword(token, "include");
        const raw = rest.replace(/^\s*:/, "").trim();
        if (!raw) map.fail(offset, "`{:include:}` needs the path of a file of this template.");
        let path: string;
        try {
          path = normalizePath(raw);
        } catch (e) {
          return map.fail(offset, `Include path \`${raw}\`: ${(e as Error).message}`);
        }
        target().push({ type: "include", path, indent: token.indent, pos });
        break;
      }
    }
  }
  const open = stack.at(-1);
  if (open) {
    const closer = open.tag === "for" ? "endfor" : "endif";
    fail(file, open.pos.line, open.pos.column, `\`{:${open.tag} …:}\` is never closed with \`{:${closer}:}\`.`);
  }
  return root;
}

/** @throws TemplateError when a block opened at `offset` would nest deeper than MAX_NESTING */
function tooDeep(stack: Open[], offset: number, map: SourceMap): void {
  if (stack.length >= MAX_NESTING) map.fail(offset, `Blocks nest more than ${MAX_NESTING} deep here.`);
}

const openedNote = (open: Open | undefined) => (open ? ` (the innermost open block is \`{:${open.tag} …:}\` at line ${open.pos.line})` : "");

/** Body text after the keyword, with its offset in the source. */
function afterKeyword(token: TagToken, keyword: string): { rest: string; offset: number } {
  const at = token.body.indexOf(keyword) + keyword.length;
  return { rest: token.body.slice(at), offset: token.bodyOffset + at };
}
