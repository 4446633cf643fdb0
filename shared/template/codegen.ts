/**
 * Code generation: a node tree → the JavaScript source of one unit function
 * `(root, rt, r0, ri, rn) => string` (async when it holds a code block).
 *
 * Every name a template can write is resolved here, at compile time, as far as it can be:
 * a loop's item name, `item` and `loop.index` become plain local variables; only an
 * unqualified name that might be a field of a loop element is looked up at run time, from the
 * innermost loop outwards, then in the root scope. Template text and names only ever enter the
 * generated source as JSON string literals; the identifiers are all ours.
 */
import type { Expr, PathExpr } from "./expression.ts";
import type { Node, Pos } from "./parser.ts";
import { filterCaches, memoChain } from "./filters.ts";
import { member, q, safeKey } from "./access.ts";
import { Reuse, type Counted } from "./reuse.ts";

/** What a loop or a repeated file adds to the scope. */
interface Frame {
  /** JS variables holding the element, its index and the list length. */
  elem: string;
  /** JS variable holding the element, or an empty object in place of null and undefined, for reading its fields. */
  view: string;
  idx: string;
  len: string;
  /** Names bound to the element (`item`, `table`). */
  names: string[];
}

/** A position the generated code may report an error or warning at. */
export interface Site extends Pos {
  /** The path written in the template, e.g. `table.name`. */
  what: string;
}

/** A code block as the runtime runs it. */
export interface CodeSite {
  source: string;
  /** The `{:code:}` tag, for messages. */
  pos: Pos;
  /** First character of the code, to map its line numbers. */
  codePos: Pos;
}

/** Generated source of one unit, with the tables its code indexes into. */
export interface UnitSource {
  body: string;
  sites: Site[];
  blocks: CodeSite[];
  async: boolean;
  /** Names of the filters the body calls as `$f_<name>` (and, if memoised, reads as `$m_<name>`). */
  filters: string[];
  /** Keys of the filter chains (see memoChain) it calls as `$f_<ident>` and reads as `$m_<ident>` (chainIdent). */
  chains: string[];
}

/** The identifier part of a chain's key: `singular|pascal` → `singular$pascal` (filter names are words). */
export const chainIdent = (key: string) => key.replaceAll("|", "$");

/** Text appended at the end of a loop body's run when `cond` (generated JS) holds. */
interface Tail {
  text: string;
  cond: string;
}

/** Most loop elements an unqualified name is looked up in by inline code; past that, through `$L`. */
const maxInlineFields = 3;

/** Most branches of an `if` generated as an `else if` chain; past that, flat (see node). */
const maxElseIfs = 64;

/** Longest value whose file name a unit keeps (see generateUnit). */
const maxPlacedKey = 256;

/** Longest text at the start of a loop body that moves to the end of the previous iteration (it is copied into every final text). */
const maxLead = 80;

const loopFields: Record<string, (f: Frame) => string> = {
  index: (f) => f.idx,
  number: (f) => `(${f.idx} + 1)`,
  first: (f) => `(${f.idx} === 0)`,
  last: (f) => `(${f.idx} === ${f.len} - 1)`,
  length: (f) => f.len,
};

class Generator {
  readonly out: string[] = [];
  readonly sites: Site[] = [];
  readonly blocks: CodeSite[] = [];
  async = false;
  private counter = 0;

  /** True once a lookup went through `$L`; the next pass then keeps every element in `es` (`deep`). */
  deepUsed = false;

  /** Filters the unit uses; the factory binds each to a local `$f_<name>`. */
  readonly filters = new Set<string>();

  /**
   * Code applying filter `name` to `arg`. A memoised filter's table is read inline (`$m_<name>`,
   * falling back to the call on a miss), which spares a call and a conversion per use; `f` and
   * `g` are temporaries, safe to share because `arg` is fully evaluated before either is set.
   */
  private applyFilter(name: string, arg: string): string {
    this.filters.add(name);
    if (!Object.hasOwn(filterCaches, name)) return `$f_${name}(${arg})`;
    return `((g = $m_${name}.get(f = ${arg})) !== undefined ? g : $f_${name}(f))`;
  }

  /** Chains the unit uses; the factory binds each as `$f_` and `$m_` of its chainIdent. */
  readonly chains = new Set<string>();

  /** Code applying `names` in order to `arg`: a run of memoised filters reads one chain's table (see memoChain). */
  private applyFilters(names: string[], arg: string): string {
    let code = arg;
    for (let i = 0; i < names.length; ) {
      let j = i;
      while (j < names.length && Object.hasOwn(filterCaches, names[j]!)) j++;
      const key = j - i > 1 ? memoChain(names.slice(i, j)) : null;
      if (key === null) {
        code = this.applyFilter(names[i]!, code);
        i++;
        continue;
      }
      this.chains.add(key);
      const id = chainIdent(key);
      code = `((g = $m_${id}.get(f = ${code})) !== undefined ? g : $f_${id}(f))`;
      i = j;
    }
    return code;
  }

  /** An expression without its filters, and their names in the order they apply. */
  private static unfilter(e: Expr): { base: Expr; names: string[] } {
    const names: string[] = [];
    while (e.type === "filter") {
      names.unshift(e.name);
      e = e.operand;
    }
    return { base: e, names };
  }

  private site(pos: Pos, what: string): string {
    this.sites.push({ ...pos, what });
    return `SITES[${this.sites.length - 1}]`;
  }

  /** Value at a path, `undefined` when missing (never throws). */
  lookup(path: PathExpr, frames: Frame[]): string {
    const [head, ...rest] = path.segments as [string, ...string[]];
    let expr: string | null = null;
    // The variable to read the first remaining segment from, when `expr` is an element.
    let view: string | null = null;
    // Frames passed by before the one that binds `head` (or the root), innermost first.
    const passed: Frame[] = [];
    for (let i = frames.length - 1; i >= 0 && expr === null; i--) {
      const f = frames[i]!;
      if (f.names.includes(head)) {
        expr = f.elem;
        view = f.view;
      } else if (head === "loop") {
        const field = rest[0] !== undefined ? loopFields[rest[0]] : undefined;
        if (field) {
          rest.shift();
          expr = field(f);
        } else expr = `rt.loop(${f.idx}, ${f.len})`;
      } else {
        // The element's own field, if it has one; otherwise keep looking outwards.
        passed.push(f);
      }
    }
    const fromRoot = safeKey(head) ? `o_root[${q(head)}]` : member("root", head, true);
    const name = q(head);
    // Past a few elements the inline tests (some 80 characters each, naming a variable of an
    // outer block) give way to one helper call over the unit's array of elements (`es`, see
    // `deep`): loops nested 90 deep had made every unqualified name 7 KB of code, and V8 then
    // resolved each of its names through every enclosing block; a template of 40,000 nodes
    // took minutes and gigabytes to compile.
    if (passed.length > maxInlineFields) {
      this.deepUsed = true;
      expr = `((t = $L(${name}, es, ${frames.indexOf(passed[0]!)}, ${frames.indexOf(passed.at(-1)!)})) !== undefined ? t : ${expr ?? fromRoot})`;
    } else {
      const chain = passed
        .map(({ elem: e }) => (safeKey(head) ? `(typeof ${e} === "object" && ${e} !== null && (t = ${e}[${name}]) !== undefined) ? t : ` : `$H(${e}, ${name}) ? ${e}[${name}] : `))
        .join("");
      expr = chain ? `(${chain}${expr ?? fromRoot})` : (expr ?? fromRoot);
    }
    for (const segment of rest) {
      // A view reads a field with no null check of its own (an empty object has no safe key).
      expr = view !== null && safeKey(segment) ? `${view}[${q(segment)}]` : member(expr, segment, /^[a-z]\w*$/.test(expr));
      view = null;
    }
    return expr;
  }

  /** Value of an expression (filters applied; missing values stay undefined). */
  value(e: Expr, frames: Frame[]): string {
    switch (e.type) {
      case "path":
        return this.lookup(e, frames);
      case "literal":
        return JSON.stringify(e.value);
      case "filter": {
        const { base, names } = Generator.unfilter(e);
        return this.applyFilters(names, this.value(base, frames));
      }
      default:
        return this.truth(e, frames);
    }
  }

  /** A JS boolean expression for a condition. */
  truth(e: Expr, frames: Frame[]): string {
    switch (e.type) {
      case "not":
        return `!${this.truth(e.operand, frames)}`;
      case "logic":
        return `(${this.truth(e.left, frames)} ${e.op === "and" ? "&&" : "||"} ${this.truth(e.right, frames)})`;
      case "compare": {
        const op = e.op === "==" ? "===" : e.op === "!=" ? "!==" : e.op;
        return `(${this.value(e.left, frames)} ${op} ${this.value(e.right, frames)})`;
      }
      default:
        // Booleans first: most conditions test flags (`is_nullable`), and two comparisons cost less than $T's checks.
        return `((t = ${this.value(e, frames)}) === true || (t !== false && $T(t)))`;
    }
  }

  emit(line: string): void {
    this.out.push(line);
  }

  /** Reserves a line (filled in later) and returns its index. */
  reserve(): number {
    this.out.push("");
    return this.out.length - 1;
  }

  /** Filtered values computed once per unit run or loop iteration. */
  readonly reuse: Reuse;

  /** True for a file name: values are also checked to be plain path parts. */
  pathParts: boolean;

  /** True when every loop stores its element in `es` at its frame's index (some lookup reads them through `$L`). */
  readonly deep: boolean;

  constructor(counts: Counted | null, pathParts: boolean, deep: boolean) {
    this.reuse = new Reuse(counts);
    this.pathParts = pathParts;
    this.deep = deep;
  }

  /** Ends the unit body's reuse region. */
  finish(): void {
    this.reuse.close(this.out);
  }

  /**
   * Code of `nodes`. With a `tail`, its text is appended after them when its condition holds,
   * joined to their last text (in every branch of a final `if`) so that it costs no append of its own.
   */
  nodes(nodes: Node[], frames: Frame[], tail: Tail | null = null): void {
    let text = "";
    const flush = () => {
      if (text) this.emit(`out += ${q(text)};`);
      text = "";
    };
    for (const [i, node] of nodes.entries()) {
      if (node.type === "text") {
        text += node.value;
        continue;
      }
      flush();
      if (tail && node.type === "if" && i === nodes.length - 1) return this.node(node, frames, tail);
      this.node(node, frames);
    }
    if (!tail) return flush();
    this.emit(text ? `out += ${tail.cond} ? ${q(text + tail.text)} : ${q(text)};` : `if (${tail.cond}) out += ${q(tail.text)};`);
  }

  /** Code of the text a placeholder inserts (a missing value reported as the mode says). */
  text(node: Extract<Node, { type: "output" }>, frames: Frame[]): string {
    const { base, names } = Generator.unfilter(node.expr);
    const wrap = this.applyFilters(names, "v");
    if (base.type !== "path") return `(v = ${this.value(base, frames)}, $S(${wrap}))`;
    const site = this.site(node.pos, base.segments.join("."));
    const raw = this.lookup(base, frames);
    const key = `${raw}|${names.join("|")}`;
    const c = names.length ? this.reuse.variable(raw, key) : null;
    const k = names.length ? this.reuse.perIndex(raw, key) : null;
    let computed = `$S(${wrap})`;
    if (k !== null) computed = k.first ? `(${k.at} = ${computed})` : `(u = ${k.at}) !== undefined ? u : (${k.at} = ${computed})`;
    const filtered = c === null ? computed : `${c} !== undefined ? ${c} : (${c} = ${computed})`;
    return `(v = ${raw}) === undefined ? rt.miss(${site}) : ${filtered}`;
  }

  private node(node: Exclude<Node, { type: "text" }>, frames: Frame[], tail: Tail | null = null): void {
    switch (node.type) {
      case "output": {
        const expr = this.text(node, frames);
        // In a file name, note whether every value is a plain path part (see generateUnit).
        this.emit(this.pathParts ? `out += (w = ${expr}, plain = plain && $Q(w), w);` : `out += ${expr};`);
        break;
      }
      case "for": {
        const n = this.counter++;
        const frame: Frame = { elem: `e${n}`, idx: `i${n}`, len: `n${n}`, view: `o${n}`, names: [node.name ?? "item"] };
        const site = this.site(node.pos, node.collection.segments.join("."));
        this.emit(`{ var a${n} = ${this.lookup(node.collection, frames)}; if (!Array.isArray(a${n})) a${n} = rt.list(a${n}, ${site});`);
        // Loop rotation: text that starts the body (the indent of a line, an opening quote) is
        // appended before the first iteration and then at the end of each but the last, where
        // it joins the text that ends the body: one append per iteration fewer.
        const [first] = node.body;
        const lead = first?.type === "text" && node.body.length > 1 && first.value.length <= maxLead ? first.value : null;
        if (lead !== null) this.emit(`if (a${n}.length > 0) out += ${q(lead)};`);
        this.emit(`for (var i${n} = 0, n${n} = a${n}.length; i${n} < n${n}; i${n}++) { var e${n} = a${n}[i${n}], o${n} = e${n} == null ? $E : e${n};${this.deep ? ` es[${frames.length}] = e${n};` : ""}`);
        // The clock every 64 iterations: a body can cost far more than its count says (an
        // included partial of thousands of nodes), so iterations alone do not bound the time.
        this.emit(`if (++it > IL || out.length > OL || ((it & 63) === 0 && Date.now() > DL)) rt.limit(${site}, it);`);
        this.reuse.open(n, this.reserve(), this.lookup(node.collection, frames));
        if (lead === null) this.nodes(node.body, [...frames, frame]);
        else this.nodes(node.body.slice(1), [...frames, frame], { text: lead, cond: `i${n} !== n${n} - 1` });
        this.reuse.close(this.out);
        this.emit(`} }`);
        break;
      }
      case "if": {
        if (node.branches.length > maxElseIfs) {
          // A long chain as a labelled block of flat `if`s that leave it: V8 parses `else if`
          // recursively, and some thousands of `{:elseif:}` overflowed its stack (a 500).
          const label = `b${this.counter++}`;
          this.emit(`${label}: {`);
          for (const branch of node.branches) {
            this.emit(`if (${this.truth(branch.cond, frames)}) {`);
            this.nodes(branch.body, frames, tail);
            this.emit(`break ${label}; }`);
          }
          if (node.otherwise || tail) this.nodes(node.otherwise ?? [], frames, tail);
          this.emit(`}`);
          break;
        }
        node.branches.forEach((branch, i) => {
          this.emit(`${i === 0 ? "if" : "} else if"} (${this.truth(branch.cond, frames)}) {`);
          this.nodes(branch.body, frames, tail);
        });
        if (node.otherwise || tail) {
          this.emit(`} else {`);
          this.nodes(node.otherwise ?? [], frames, tail);
        }
        this.emit(`}`);
        break;
      }
      case "code": {
        this.async = true;
        this.blocks.push({ source: node.source, pos: node.pos, codePos: node.codePos });
        const call = `await rt.code(BLOCKS[${this.blocks.length - 1}], ${this.bindings(frames)})`;
        this.emit(`out += ${node.indent ? `rt.indent(${call}, ${q(node.indent)})` : call};`);
        break;
      }
      case "include": {
        const n = this.counter++;
        if (node.indent) this.emit(`{ var s${n} = out; out = "";`);
        this.nodes(node.nodes ?? [], frames);
        if (node.indent) this.emit(`out = s${n} + rt.indent(out, ${q(node.indent)}); }`);
        break;
      }
    }
  }

  /** The names a code block sees besides the root scope: every frame's names, inner ones winning. */
  private bindings(frames: Frame[]): string {
    const entries = new Map<string, string>();
    for (const f of frames) for (const name of f.names) entries.set(name, f.elem);
    const inner = frames.at(-1);
    if (inner) entries.set("loop", `rt.loop(${inner.idx}, ${inner.len})`);
    // Computed keys: in a literal, `"__proto__": v` would set the prototype instead of binding a loop variable of that name.
    return `{ ${[...entries].map(([k, v]) => `[${q(k)}]: ${v}`).join(", ")} }`;
  }

  source(): string {
    return this.out.join("\n");
  }
}

/*
 * Variables inside the body (a loop's, a cache's, an include's) are all `var`s, numbered so
 * that none repeats: a block that declares nothing needs no scope of its own, whereas with
 * `let` and `const` every loop made one, and V8 resolved every name of the code through all
 * the blocks around it (three times the parse time of the same code at 90 loops deep).
 */

/**
 * Generates the source of one unit. `repeatNames` are the names a repeated file binds its
 * element to (the element arrives as `r0`, its index as `ri`, the count as `rn`).
 *
 * With `pathParts` (a file name), the unit also sets `rt.plainName`: true when every value it
 * inserted is non-empty printable ASCII without `/`, `\`, `.` or `:`. Such values
 * cannot change how the name's static text splits into segments, so when that text is itself a
 * plain path the result needs no normalising: checking short flat values is much cheaper than
 * scanning the freshly concatenated name.
 *
 * With `name` (a file's name, the unit's `nodes` being its content), the unit renders the name
 * first, as above, and hands it to `place(name, plain)`; it returns null when that refuses the
 * name, else renders the content. One unit per file instead of two shares the values the name
 * and the content both print (the class name in the file name, see Reuse) and a call per file.
 *
 * A name of one placeholder (`src/models/{:table.table_name|singular|pascal:}.ts`) is a
 * function of the text that placeholder inserts, so the unit keeps the path `place` returned
 * for that text (`$n`, bounded by runtime.ts `N`) and, when the text comes again, hands that
 * path back to `place` instead of building and checking the name again: a render repeated over
 * the same names (a run again, a preview) then sets files under path strings V8 has already
 * internalised, where each new name was a string table lookup (docs/perf/README.md, "a fourth
 * look"). The value itself is computed every time, so a missing one still warns or fails.
 */
export function generateUnit(nodes: Node[], repeatNames: string[] | null, pathParts = false, name: Node[] | null = null): UnitSource {
  const frames: Frame[] = repeatNames ? [{ elem: "r0", idx: "ri", len: "rn", view: "o_r0", names: repeatNames }] : [];
  const pass = (counts: Counted | null, deep: boolean) => {
    const g = new Generator(counts, pathParts || name !== null, deep);
    g.reuse.open(null, g.reserve());
    if (name !== null) {
      const outputs = name.filter((n) => n.type === "output");
      const one = outputs.length === 1 && name.every((n) => n.type === "text" || n.type === "output") ? outputs[0]! : null;
      if (one !== null) {
        const at = name.indexOf(one);
        const before = name.slice(0, at).map((n) => (n.type === "text" ? n.value : "")).join("");
        const after = name.slice(at + 1).map((n) => (n.type === "text" ? n.value : "")).join("");
        g.emit(`w = ${g.text(one, frames)};`);
        g.emit(`if (w.length > ${maxPlacedKey} || (p = $n.get(w)) === undefined) { if ((p = place(${q(before)} + w + ${q(after)}, $Q(w))) === null) return null; if (w.length <= ${maxPlacedKey}) $N($n, w, p); }`);
        g.emit(`else if (place(p, true) === null) return null;`);
      } else {
        g.nodes(name, frames);
        g.emit(`if (place(out, plain) === null) return null;`);
        g.emit(`out = "";`);
      }
      g.pathParts = false;
    }
    g.nodes(nodes, frames);
    g.finish();
    return g;
  };
  // The first pass counts repeated values (see Reuse); the second generates with that knowledge.
  const first = pass(null, false);
  const g = pass(first.reuse.counted, first.deepUsed);
  // `out | 0` flattens the rope that `+=` built (as the flatstr package does): a flat string is
  // one object for the garbage collector instead of one per piece, which halves GC time when
  // hundreds of files are kept until the render ends.
  // Field reads go through views (see Frame): one null check per element instead of one per read.
  const views = `const o_root = root == null ? $E : root, o_r0 = r0 == null ? $E : r0;`;
  const es = g.deep ? ` const es = [${repeatNames ? "r0" : ""}];` : "";
  const head = `let out = "", v, t, f, g, u, it = 0${pathParts || name !== null ? ", plain = true, w, p" : ""}; const IL = rt.maxIterations, OL = rt.maxOutputBytes, DL = rt.deadline; ${views}${es}`;
  const tail = pathParts ? "rt.plainName = plain;\nreturn out;" : "out | 0;\nreturn out;";
  const body = `${head}\n${g.source()}\n${tail}`;
  return { body, sites: g.sites, blocks: g.blocks, async: g.async, filters: [...g.filters], chains: [...g.chains] };
}
