/**
 * Text fusion, a compile-time rewrite of the node tree: short text right before or after an
 * `if` moves into every branch (an empty `else` is added when needed), so that
 * `: {:if a:}number{:else:}string{:endif:};` appends one string per run instead of three.
 * Appending is most of what a compiled template does, and conditions have no side effects
 * (they neither warn nor fail), so the output is unchanged.
 *
 * Included trees are shared between include sites, so the rewrite builds new nodes and arrays
 * and never changes the ones it is given.
 */
import type { Node } from "./parser.ts";

/** Longest text moved into branches (it is copied once per branch). */
const maxMoved = 80;
/** Most branches (else included) an `if` may have for text to move into it. */
const maxBranches = 6;

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
function wrapBranches(node: IfNode, prefix: string, suffix: string): IfNode {
  const wrap = (body: Node[]) => [...text(prefix), ...body, ...text(suffix)];
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

/** Returns `nodes` with short text around conditionals moved into their branches, at every depth. */
export function fuse(nodes: Node[]): Node[] {
  const list = joinTexts(nodes.map(fuseChildren));
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
    out.push(prefix || suffix ? wrapBranches(node, prefix, suffix) : node);
  }
  return out.filter((n) => n.type !== "text" || n.value !== "");
}
