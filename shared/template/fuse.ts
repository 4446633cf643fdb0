/**
 * Text fusion, a compile-time rewrite of the node tree: short text right before or after an
 * `if` moves into every branch (an empty `else` is added when needed), so that
 * `: {:if a:}number{:else:}string{:endif:};` appends one string per run instead of three; and an
 * `if` followed by more (with at most short text between) gets the others copied to the end of
 * each of its branches, so that the text of two conditions joins too:
 * `{:if n:}?{:endif:}: {:if b:}number{:else:}string{:endif:}` appends `?: number` at once.
 * Appending is most of what a compiled template does, and conditions have no side effects
 * (they neither warn nor fail), so the output is unchanged.
 *
 * Included trees are shared between include sites, so the rewrite builds new nodes and arrays
 * and never changes the ones it is given (copies of an `if` share its nodes the same way).
 */
import type { Node } from "./parser.ts";

/** Longest text moved into branches (it is copied once per branch). */
const maxMoved = 80;
/** Most branches (else included) an `if` may have for text to move into it. */
const maxBranches = 6;

/** Most paths through a chain of `if`s (the product of their branch counts, `else` included). */
const maxPaths = 16;
/** Most nodes in a branch of an `if` that may be copied. */
const maxCopied = 8;

type IfNode = Extract<Node, { type: "if" }>;

/** The part of `text` that may move: all of it, or its last line (`tail`) or first line (head), if short. */
function movable(text: string, tail: boolean): { moved: string; kept: string } {
  if (text.length <= maxMoved) return { moved: text, kept: "" };
  const cut = tail ? text.lastIndexOf("\n") + 1 : text.indexOf("\n") + 1;
  if (cut === 0) return { moved: "", kept: text };
  const moved = tail ? text.slice(cut) : text.slice(0, cut);
  if (moved.length > maxMoved) return { moved: "", kept: text };
  return tail ? { moved, kept: text.slice(0, cut) } : { moved, kept: text.slice(cut) };
}

const text = (value: string): Node[] => (value ? [{ type: "text", value }] : []);

/** `node` with `prefix` at the start and `suffix` at the end of every branch. */
function wrapBranches(node: IfNode, prefix: Node[], suffix: Node[]): IfNode {
  const wrap = (body: Node[]) => [...prefix, ...body, ...suffix];
  return {
    ...node,
    branches: node.branches.map((b) => ({ cond: b.cond, body: wrap(b.body) })),
    otherwise: wrap(node.otherwise ?? []),
  };
}

/** The children of `node` fused; the node itself unchanged otherwise. */
function fuseChildren(node: Node): Node {
  switch (node.type) {
    case "for":
      return { ...node, body: fuse(node.body) };
    case "if":
      return { ...node, branches: node.branches.map((b) => ({ cond: b.cond, body: fuse(b.body) })), otherwise: node.otherwise ? fuse(node.otherwise) : null };
    case "include":
      return { ...node, nodes: fuse(node.nodes ?? []) };
    default:
      return node;
  }
}

/** Whether copies of `node` stay small: every branch a few text and placeholder nodes (no loop, include, code block or `if`). */
const copyable = (node: IfNode) =>
  [...node.branches.map((b) => b.body), node.otherwise ?? []].every((body) => body.length <= maxCopied && body.every((n) => n.type === "text" || n.type === "output"));

/** Paths through an `if`: its branches and its `else`, given or added. */
const pathsOf = (node: IfNode) => node.branches.length + 1;

/** `first` with the rest of its chain (the text before each, then the `if`) at the end of every branch, nested likewise. */
function nest(first: IfNode, rest: { gap: string; node: IfNode }[]): IfNode {
  const [next, ...after] = rest as [{ gap: string; node: IfNode }, ...{ gap: string; node: IfNode }[]];
  return wrapBranches(first, [], [...text(next.gap), after.length ? nest(next.node, after) : next.node]);
}

/** `list` with each run of `if`s (short text between them allowed) nested into its first (see the module comment). */
function chainIfs(list: Node[]): Node[] {
  const out: Node[] = [];
  for (let i = 0; i < list.length; i++) {
    const first = list[i]!;
    if (first.type !== "if") {
      out.push(first);
      continue;
    }
    const rest: { gap: string; node: IfNode }[] = [];
    let paths = pathsOf(first);
    let end = i;
    for (;;) {
      const gap = list[end + 1]?.type === "text" ? (list[end + 1] as { value: string }).value : null;
      const next = list[end + (gap === null ? 1 : 2)];
      if (next?.type !== "if" || (gap !== null && gap.length > maxMoved) || !copyable(next) || paths * pathsOf(next) > maxPaths) break;
      paths *= pathsOf(next);
      rest.push({ gap: gap ?? "", node: next });
      end += gap === null ? 1 : 2;
    }
    out.push(rest.length ? nest(first, rest) : first);
    i = end;
  }
  return out;
}

/** Adjacent text nodes joined (so a neighbour of an `if` is one node). */
function joinTexts(nodes: Node[]): Node[] {
  const out: Node[] = [];
  for (const node of nodes) {
    const last = out.at(-1);
    if (node.type === "text" && last?.type === "text") out[out.length - 1] = { type: "text", value: last.value + node.value };
    else out.push(node);
  }
  return out;
}

/**
 * Returns `nodes` with short text around conditionals moved into their branches, at every depth.
 * It works from the outside in, so that text moved into a branch can move on into an `if`
 * inside it.
 */
export function fuse(nodes: Node[]): Node[] {
  const list = chainIfs(joinTexts(nodes));
  const out: Node[] = [];
  for (let i = 0; i < list.length; i++) {
    const node = list[i]!;
    if (node.type !== "if" || node.branches.length + 1 > maxBranches) {
      out.push(node);
      continue;
    }
    let prefix = "";
    const before = out.at(-1);
    if (before?.type === "text") {
      const { moved, kept } = movable(before.value, true);
      prefix = moved;
      if (kept) out[out.length - 1] = { type: "text", value: kept };
      else if (moved) out.pop();
    }
    let suffix = "";
    const after = list[i + 1];
    if (after?.type === "text") {
      const { moved, kept } = movable(after.value, false);
      suffix = moved;
      if (moved) list[i + 1] = { type: "text", value: kept };
    }
    out.push(prefix || suffix ? wrapBranches(node, text(prefix), text(suffix)) : node);
  }
  return out.filter((n) => n.type !== "text" || n.value !== "").map(fuseChildren);
}
