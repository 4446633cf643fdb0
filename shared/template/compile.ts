/**
 * Compiling a whole template: parse every source, resolve includes, generate one JavaScript
 * function per source with `new Function` (only our generated code is ever compiled this way;
 * code blocks go to the sandbox as data), and cache the result by a hash of the template.
 */
import { chainIdent, generateUnit, type CodeSite, type Site } from "./codegen.ts";
import { TemplateError } from "./errors.ts";
import { fuse } from "./fuse.ts";
import { parsePath, type PathExpr } from "./expression.ts";
import { SourceMap } from "./errors.ts";
import { singularize } from "./inflect.ts";
import { MAX_TEMPLATE_NODES, resolveIncludes, type IncludeSource } from "./includes.ts";
import { parse, type Node } from "./parser.ts";
import { normalizePath, valuesStayPortable } from "./paths.ts";
import { helpers } from "./runtime.ts";
import { CONTENT_FILE, type TemplateIssue, type TemplateSource } from "./types.ts";
import type { UnitRuntime } from "./unitRuntime.ts";

/** Checks a file's rendered name (see generateUnit), noting its output path; returns that path, or null when the file is not to be written. */
export type Place = (name: string, plain: boolean) => string | null;

/**
 * A compiled source: call `run(root, rt)`, or `run(root, rt, element, index, count)` for a
 * repeated file; a file's unit also takes its `place` and returns null when that refuses it.
 */
export interface Unit<R = string> {
  run: (root: Record<string, unknown>, rt: UnitRuntime, r0?: unknown, ri?: number, rn?: number, place?: Place) => R | Promise<R>;
  /** True when the source holds a code block (run returns a promise). */
  async: boolean;
}

/** A compiled template file. */
export interface CompiledFile {
  /** `file_name` as written (used in messages). */
  fileName: string;
  order: number;
  /** The collection the file repeats over, with the names its element is bound to. */
  repeat: { path: PathExpr; source: string; names: string[] } | null;
  /** True for a partial (last path segment starts with `_`): includable, never written out. */
  partial: boolean;
  /** The file name alone (for plans). */
  name: Unit;
  /** True when the name's static text, with each value standing for one plain word, is a plain path (see generateUnit). */
  plainSkeleton: boolean;
  /** The file name, then (when placed) its content. */
  render: Unit<string | null>;
}

/** A compiled template. */
export interface CompiledTemplate {
  content: Unit;
  /** Files in output order. */
  files: CompiledFile[];
}

/** Compiles one generated unit into a function (`pathParts` for a file name, `name` for a file's name then content; see generateUnit). */
function build<R = string>(nodes: Node[], repeatNames: string[] | null, pathParts = false, name: Node[] | null = null): Unit<R> {
  const unit = generateUnit(fuse(nodes), repeatNames, pathParts, name && fuse(name));
  const bind = [
    ...unit.filters.map((n) => `const $f_${n} = $F[${JSON.stringify(n)}], $m_${n} = $C[${JSON.stringify(n)}];`),
    ...unit.chains.map((k) => `const $f_${chainIdent(k)} = $K[${JSON.stringify(k)}], $m_${chainIdent(k)} = $C[${JSON.stringify(k)}];`),
  ].join(" ");
  const source = `"use strict"; const { S: $S, T: $T, P: $P, H: $H, L: $L, Q: $Q, E: $E, F: $F, K: $K, C: $C, N: $N } = $helpers; const $n = new Map(); ${bind}
return ${unit.async ? "async " : ""}function unit(root, rt, r0, ri, rn, place) {
${unit.body}
};`;
  // The one use of the Function constructor: it compiles our generated code, in which template
  // text and names appear only as JSON string literals. Code blocks never come here.
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  const factory = new Function("$helpers", "SITES", "BLOCKS", source) as (h: typeof helpers, s: Site[], b: CodeSite[]) => Unit<R>["run"];
  return { run: factory(helpers, unit.sites, unit.blocks), async: unit.async };
}

/** Names a repeated file binds its element to: `item`, plus the singular of the collection (`schema.tables` → `table`). */
function repeatNames(path: PathExpr): string[] {
  const last = path.segments.at(-1) ?? "";
  const single = singularize(last);
  const usable = single !== last && /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(single) && single !== "item" && single !== "loop";
  return usable ? ["item", single] : ["item"];
}

/**
 * Whether a file name, each placeholder standing for the word `x`, is already a normal safe
 * path, and one that plain values cannot make unportable (paths.ts valuesStayPortable).
 */
function isPlainSkeleton(nodes: Node[]): boolean {
  const skeleton = nodes.map((n) => (n.type === "text" ? n.value : "x")).join("");
  try {
    if (normalizePath(skeleton) !== skeleton) return false;
  } catch {
    return false;
  }
  return valuesStayPortable(nodes.map((n) => (n.type === "text" ? n.value : "\u0000")).join(""));
}

const isPartial = (fileName: string) => /(^|\/)_[^/]*$/.test(fileName);

/** Parses one source, recording a syntax error instead of throwing. */
function tryParse(issues: TemplateIssue[], text: string, file: string, placeholdersOnly = false): Node[] {
  try {
    return parse(text, file, { placeholdersOnly });
  } catch (e) {
    if (!(e instanceof TemplateError)) throw e;
    issues.push(...e.issues);
    return [];
  }
}

/** Result of compiling: the template, or every problem found. */
export type CompileResult = { ok: true; template: CompiledTemplate } | { ok: false; issues: TemplateIssue[] };

/**
 * Most characters of source a template may hold, all its files together (what a whole
 * template's JSON body allows at once). Files added one by one could make hundreds of
 * megabytes, whose parse alone held the process and filled its memory.
 */
export const MAX_SOURCE_CHARS = 16_000_000;

/**
 * Most tags (`{:` openers) a template's sources may hold together, counted before anything is
 * parsed: a template within MAX_TEMPLATE_NODES holds far fewer (a block takes two or three
 * tags per node), while parsing 3,000,000 placeholders (15 M characters) only to refuse them
 * took 3 s and 1.2 GB.
 */
export const MAX_SOURCE_TAGS = 4 * MAX_TEMPLATE_NODES;

/** Number of `{:` in `text`, stopping once past `max`. */
function countTags(text: string, max: number): number {
  let n = 0;
  for (let at = text.indexOf("{:"); at !== -1 && n <= max; at = text.indexOf("{:", at + 2)) n++;
  return n;
}

/** Why a template is too large to even parse, or null. */
function tooLarge(source: TemplateSource): string | null {
  const texts = [source.content ?? "", ...(source.files ?? []).flatMap((f) => [f.content ?? "", f.file_name])];
  const sourceChars = texts.reduce((sum, text) => sum + text.length, 0);
  if (sourceChars > MAX_SOURCE_CHARS) return `its files hold ${sourceChars} characters together, more than ${MAX_SOURCE_CHARS}`;
  let tags = 0;
  for (const text of texts) if ((tags += countTags(text, MAX_SOURCE_TAGS - tags)) > MAX_SOURCE_TAGS) return `its files hold more than ${MAX_SOURCE_TAGS} tags together`;
  return null;
}

/** Compiles a template without the cache. */
function compileUncached(source: TemplateSource): CompileResult {
  const large = tooLarge(source);
  if (large !== null) return { ok: false, issues: [{ file: CONTENT_FILE, line: 1, column: 1, message: `The template is too large to compile: ${large}.` }] };
  const issues: TemplateIssue[] = [];
  const files = (source.files ?? []).map((f, index) => ({ f, index }));
  files.sort((a, b) => (a.f.order ?? 0) - (b.f.order ?? 0) || a.index - b.index);
  const contentNodes = tryParse(issues, source.content ?? "", CONTENT_FILE);
  const includeSources: IncludeSource[] = [{ file: CONTENT_FILE, key: null, nodes: contentNodes }];
  const parsed = files.map(({ f }) => {
    const nodes = tryParse(issues, f.content ?? "", f.file_name);
    let key: string | null = null;
    try {
      key = normalizePath(f.file_name);
    } catch {
      // A file name with no safe form cannot be included; its output path is checked when rendered.
    }
    includeSources.push({ file: f.file_name, key, nodes, partial: isPartial(f.file_name) });
    const nameNodes = tryParse(issues, f.file_name, f.file_name, true);
    let repeat: CompiledFile["repeat"] = null;
    if (f.repeat !== null && f.repeat !== undefined && f.repeat.trim() !== "") {
      try {
        const path = parsePath(f.repeat, new SourceMap(f.file_name, f.repeat));
        repeat = { path, source: f.repeat.trim(), names: repeatNames(path) };
      } catch (e) {
        if (!(e instanceof TemplateError)) throw e;
        issues.push(...e.issues.map((i) => ({ ...i, line: 1, column: 1, message: `repeat \`${f.repeat}\`: ${i.message}` })));
      }
    }
    return { f, nodes, nameNodes, repeat };
  });
  issues.push(...resolveIncludes(includeSources));
  if (issues.length) return { ok: false, issues };
  const compiledFiles = parsed.map(({ f, nodes, nameNodes, repeat }): CompiledFile => {
    const names = repeat ? repeat.names : null;
    const partial = isPartial(f.file_name);
    return {
      fileName: f.file_name,
      order: f.order ?? 0,
      repeat,
      partial,
      name: build(nameNodes, names, true),
      plainSkeleton: isPlainSkeleton(nameNodes),
      // A partial is never rendered as a file of its own (only spliced into includes): its
      // body is not compiled by itself, which had doubled the cost of a template's partials.
      render: build<string | null>(partial ? [] : nodes, names, false, nameNodes),
    };
  });
  return { ok: true, template: { content: build(contentNodes, null), files: compiledFiles } };
}

/** Bounded LRU of compile results by template content (a Map keeps insertion order). */
const cache = new Map<string, { result: CompileResult; size: number }>();
const maxEntries = 256;
const maxChars = 32 * 1024 * 1024;
let cachedChars = 0;

/**
 * The cache key: everything that affects compilation, as one canonical string. A Map keyed by it
 * hashes the content (V8 string hashing) and, unlike a digest, can never confuse two templates;
 * it costs a few microseconds where JSON plus SHA-256 cost tens.
 */
function keyOf(source: TemplateSource): string {
  return JSON.stringify([source.content ?? "", (source.files ?? []).map((f) => [f.file_name, f.content ?? "", f.order ?? 0, f.repeat ?? null])]);
}

/** What keyOf encodes, as a flat list of strings, numbers and nulls. */
const partsOf = (source: TemplateSource): unknown[] => [
  source.content ?? "",
  ...(source.files ?? []).flatMap((f) => [f.file_name, f.content ?? "", f.order ?? 0, f.repeat ?? null]),
];

const sameParts = (a: unknown[], b: unknown[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * The template compiled or found last, by its parts: renders of one template in a row (a run
 * over many schemas, a preview re-rendered as variables change) compare its strings, often the
 * very same ones, instead of building and hashing the key again.
 */
let last: { parts: unknown[]; result: CompileResult } | null = null;

/** Compiles a template, from the cache when the same template was compiled before. */
export function compileTemplate(source: TemplateSource): CompileResult {
  const parts = partsOf(source);
  if (last !== null && sameParts(last.parts, parts)) return last.result;
  const result = compileKeyed(source);
  last = { parts, result };
  return result;
}

/** compileTemplate through the cache by key. */
function compileKeyed(source: TemplateSource): CompileResult {
  const key = keyOf(source);
  const hit = cache.get(key);
  if (hit) {
    cache.delete(key);
    cache.set(key, hit);
    return hit.result;
  }
  const result = compileUncached(source);
  cache.set(key, { result, size: key.length });
  cachedChars += key.length;
  for (const [k, v] of cache) {
    if (cache.size <= maxEntries && cachedChars <= maxChars) break;
    cache.delete(k);
    cachedChars -= v.size;
  }
  return result;
}

/** Compiles a template or throws every problem found. @throws TemplateError */
export function compileOrThrow(source: TemplateSource): CompiledTemplate {
  const result = compileTemplate(source);
  if (!result.ok) throw new TemplateError(result.issues);
  return result.template;
}

/** Number of cached templates (for tests and metrics). */
export const cachedTemplates = () => cache.size;
