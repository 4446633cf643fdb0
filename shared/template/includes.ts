/**
 * Includes: `{:include: path:}` is resolved at compile time by splicing the included file's
 * tree into the including one, so the included text sees the scope of the include site
 * (its loop items, `loop`) and compiles with it. Include cycles, includes that would expand
 * past a size budget and includes that would nest blocks deeper than MAX_NESTING are errors.
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
}

/** Largest tree a source may expand to once its includes are spliced in. */
const maxExpandedNodes = 200_000;

/**
 * Fills `nodes` of every include node of `sources`.
 * @returns the problems found (missing targets, cycles, oversized expansion), one per include site.
 */
export function resolveIncludes(sources: IncludeSource[]): TemplateIssue[] {
  const byKey = new Map<string, IncludeSource[]>();
  for (const s of sources) if (s.key !== null) byKey.set(s.key, [...(byKey.get(s.key) ?? []), s]);
  const issues: TemplateIssue[] = [];
  const sizes = new Map<IncludeSource, number>();
  /** How deep a source nests once its includes are spliced in (an include counts as a level). */
  const depths = new Map<IncludeSource, number>();
  const stack: IncludeSource[] = [];

  const visit = (source: IncludeSource): number => {
    const known = sizes.get(source);
    if (known !== undefined) return known;
    stack.push(source);
    let size = 0;
    let deepest = 0;
    // `level`: the blocks and includes around `nodes` (the parser keeps a source's own blocks within MAX_NESTING).
    const walk = (nodes: Node[], level: number) => {
      deepest = Math.max(deepest, level);
      for (const node of nodes) {
        size++;
        if (node.type === "for") walk(node.body, level + 1);
        else if (node.type === "if") {
          for (const b of node.branches) walk(b.body, level + 1);
          if (node.otherwise) walk(node.otherwise, level + 1);
        } else if (node.type === "include") size += include(node, level);
      }
    };
    const include = (node: Extract<Node, { type: "include" }>, level: number): number => {
      const issue = (message: string) => {
        issues.push({ ...node.pos, message });
        node.nodes = [];
        return 0;
      };
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
      if (size + added > maxExpandedNodes) return issue(`Include \`${node.path}\`: the template grows past ${maxExpandedNodes} nodes once includes are expanded.`);
      const depth = level + 1 + depths.get(target)!;
      if (depth > MAX_NESTING) return issue(`Include \`${node.path}\`: blocks and includes would nest ${depth} deep here, more than ${MAX_NESTING}.`);
      deepest = Math.max(deepest, depth);
      node.nodes = target.nodes;
      return added;
    };
    walk(source.nodes, 0);
    stack.pop();
    sizes.set(source, size);
    depths.set(source, deepest);
    return size;
  };
  for (const s of sources) visit(s);
  return issues;
}
