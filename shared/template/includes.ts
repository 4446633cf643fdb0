/**
 * Includes: `{:include: path:}` is resolved at compile time by splicing the included file's
 * tree into the including one, so the included text sees the scope of the include site
 * (its loop items, `loop`) and compiles with it. Include cycles, includes that would expand
 * past a size budget and includes that would nest blocks deeper than MAX_NESTING are errors.
 *
 * Every source compiles to code of its own, with its includes expanded, so an included text
 * is compiled once per include site: what includes add is budgeted over the whole template,
 * in nodes and in characters of text (a megabyte partial included a few hundred times made
 * generated code past V8's longest string, a few thousand times ran the process out of memory).
 */
import { MAX_NESTING, type Node } from "./parser.ts";
import type { TemplateIssue } from "./types.ts";

/** A parsed source that may include others or be included. */
export interface IncludeSource {
  /** Label used in messages (the file's `file_name`). */
  file: string;
  /** Normalised `file_name`, the key includes use; null for the main content. */
  key: string | null;
  nodes: Node[];
  /** True for a partial: compiled only where it is included, so not counted by itself. */
  partial?: boolean;
}

/**
 * Most nodes and characters of text of a whole template, every source with its includes
 * expanded. Templates compile where they are checked, synchronously, in the web process too
 * (`compile`, `structure`): 500 files of a megabyte each were accepted, and compiling them held
 * that process for many minutes or ran it out of memory. Nodes are what compiling costs (text
 * is cheap: 15 M characters in 0.2 s): 40–70 µs a node for the costliest shapes measured
 * (conditions and loops nested 90 deep, 9 files of conditions), so 25,000 nodes keep a compile
 * within about 2 s on a loaded 2-core machine; at 500,000 one took 35 s and 1.3 GB. A
 * generator of thousands of lines is far inside (the benchmark's model file: 64 nodes, 30 lines).
 */
export const MAX_TEMPLATE_NODES = 25_000;
export const MAX_TEMPLATE_CHARS = 64_000_000;

/** Largest tree a source may expand to once its includes are spliced in. */
const maxExpandedNodes = MAX_TEMPLATE_NODES;
/** Most nodes includes may add to a whole template (all its sources together). */
export const MAX_INCLUDED_NODES = MAX_TEMPLATE_NODES;
/** Most characters of text includes may add to a whole template (all its sources together). */
export const MAX_INCLUDED_CHARS = 32_000_000;

/** The size of an expanded tree. */
interface Size {
  nodes: number;
  chars: number;
}

/**
 * Fills `nodes` of every include node of `sources`.
 * @returns the problems found (missing targets, cycles, oversized expansion), one per include site.
 */
export function resolveIncludes(sources: IncludeSource[]): TemplateIssue[] {
  const byKey = new Map<string, IncludeSource[]>();
  for (const s of sources) if (s.key !== null) byKey.set(s.key, [...(byKey.get(s.key) ?? []), s]);
  const issues: TemplateIssue[] = [];
  const sizes = new Map<IncludeSource, Size>();
  /** What the include sites resolved so far added, over all sources. */
  const included: Size = { nodes: 0, chars: 0 };
  /** Set once the template's budget is spent: later sites fail without a message each. */
  let spent = false;
  /** How deep a source nests once its includes are spliced in (an include counts as a level). */
  const depths = new Map<IncludeSource, number>();
  const stack: IncludeSource[] = [];

  const visit = (source: IncludeSource): Size => {
    const known = sizes.get(source);
    if (known !== undefined) return known;
    stack.push(source);
    const size: Size = { nodes: 0, chars: 0 };
    let deepest = 0;
    // `level`: the blocks and includes around `nodes` (the parser keeps a source's own blocks within MAX_NESTING).
    const walk = (nodes: Node[], level: number) => {
      deepest = Math.max(deepest, level);
      for (const node of nodes) {
        size.nodes++;
        if (node.type === "text") size.chars += node.value.length;
        else if (node.type === "for") walk(node.body, level + 1);
        else if (node.type === "if") {
          // Every branch past the first compiles to code of its own, as a node does (an `if`
          // of 100,000 `elif`s was one node).
          size.nodes += node.branches.length - 1 + (node.otherwise ? 1 : 0);
          for (const b of node.branches) walk(b.body, level + 1);
          if (node.otherwise) walk(node.otherwise, level + 1);
        } else if (node.type === "include") {
          const added = include(node, level);
          size.nodes += added.nodes;
          size.chars += added.chars;
        }
      }
    };
    const none: Size = { nodes: 0, chars: 0 };
    const include = (node: Extract<Node, { type: "include" }>, level: number): Size => {
      const issue = (message: string | null) => {
        if (message !== null) issues.push({ ...node.pos, message });
        node.nodes = [];
        return none;
      };
      if (spent) return issue(null);
      const targets = byKey.get(node.path) ?? [];
      if (targets.length === 0) return issue(`Include \`${node.path}\`: no file of this template has that name.`);
      if (targets.length > 1) return issue(`Include \`${node.path}\`: several files of this template have that name.`);
      const target = targets[0]!;
      const at = stack.indexOf(target);
      if (at !== -1) {
        const cycle = [...stack.slice(at), target].map((s) => s.file).join(" → ");
        return issue(`Include cycle: ${cycle}.`);
      }
      const added = visit(target);
      if (size.nodes + added.nodes > maxExpandedNodes) return issue(`Include \`${node.path}\`: the template grows past ${maxExpandedNodes} nodes once includes are expanded.`);
      if (included.nodes + added.nodes > MAX_INCLUDED_NODES || included.chars + added.chars > MAX_INCLUDED_CHARS) {
        spent = true;
        const what = included.nodes + added.nodes > MAX_INCLUDED_NODES ? `${MAX_INCLUDED_NODES} nodes` : `${MAX_INCLUDED_CHARS} characters`;
        return issue(`Include \`${node.path}\`: the template grows past ${what} once includes are expanded (all its files together).`);
      }
      const depth = level + 1 + depths.get(target)!;
      if (depth > MAX_NESTING) return issue(`Include \`${node.path}\`: blocks and includes would nest ${depth} deep here, more than ${MAX_NESTING}.`);
      deepest = Math.max(deepest, depth);
      node.nodes = target.nodes;
      included.nodes += added.nodes;
      included.chars += added.chars;
      return added;
    };
    walk(source.nodes, 0);
    stack.pop();
    sizes.set(source, size);
    depths.set(source, deepest);
    return size;
  };
  // Every source but a partial compiles as it expands, so their expanded sizes together are
  // what compiling the template costs (code and time); past the budget it is refused at the
  // file that passes it.
  const total: Size = { nodes: 0, chars: 0 };
  for (const s of sources) {
    const size = visit(s);
    if (s.partial) continue;
    total.nodes += size.nodes;
    total.chars += size.chars;
    if (!spent && (total.nodes > MAX_TEMPLATE_NODES || total.chars > MAX_TEMPLATE_CHARS)) {
      spent = true;
      const what = total.nodes > MAX_TEMPLATE_NODES ? `${MAX_TEMPLATE_NODES} nodes` : `${MAX_TEMPLATE_CHARS} characters of text`;
      issues.push({ file: s.file, line: 1, column: 1, message: `The template is too large to compile: its files, includes expanded, hold more than ${what} together.` });
    }
  }
  return issues;
}
