/**
 * Reuse of filtered values in generated code: a template often prints the same value through
 * the same filters many times (`{:table.table_name|singular|pascal:}` in a class name, a type,
 * a function name). Within one run of a unit, or one iteration of a loop, such a value cannot
 * change (the scope is immutable during a render and filters are pure), so the generated code
 * computes it once, into a variable declared where the innermost loop it depends on begins.
 *
 * Across loops: two loops over the same collection in one region (a model's interface, then its
 * schema, over `table.fields`) see the same elements at the same indexes, so a value that
 * depends on the element is kept per index in an array of that region, filled by whichever loop
 * computes it first and read by the others.
 */

/** A place where cache variables are declared: the unit body, or one loop's body. */
interface Region {
  /** The loop's number (its JS variables are e<n>, i<n>, n<n>), null for the unit body. */
  loop: number | null;
  /** Index of the line reserved for the declarations. */
  line: number;
  /** Cache key → variable name. */
  vars: Map<string, string>;
  /** Per-index cache key → array variable name (for loops inside this region). */
  arrays: Map<string, string>;
  /** The generated collection expression of the loop, and the region around it. */
  collection: string | null;
  parent: Region | null;
}

/** What the counting pass saw: occurrences per `region|key`, loops per per-index key. */
export interface Counted {
  values: Map<string, number>;
  loops: Map<string, Set<number>>;
}

/**
 * Tracks regions while a unit is generated. Generation runs twice: the first pass only counts
 * how often each value occurs in its region; the second caches those that occur more than once
 * (a variable for a value used once would only add work).
 */
export class Reuse {
  private readonly regions: Region[] = [];
  private next = 0;
  /** What the first pass counted; null during the first pass. */
  private readonly counts: Counted | null;
  /** What this pass counted. */
  readonly counted: Counted = { values: new Map(), loops: new Map() };

  constructor(counts: Counted | null) {
    this.counts = counts;
  }

  /** Starts a region whose declarations go on `lines[line]` (a line reserved for them); a loop's with its collection expression. */
  open(loop: number | null, line: number, collection: string | null = null): void {
    this.regions.push({ loop, line, vars: new Map(), arrays: new Map(), collection, parent: this.regions.at(-1) ?? null });
  }

  /** Ends the innermost region, writing its declarations into the reserved line. */
  close(lines: string[]): void {
    const region = this.regions.pop()!;
    // `var` (see codegen), set at every run of the region: a loop's caches start empty in each iteration.
    const names = [...[...region.vars.values()].map((c) => `${c} = undefined`), ...[...region.arrays.values()].map((a) => `${a} = []`)];
    lines[region.line] = names.length ? `var ${names.join(", ")};` : "";
  }

  /**
   * The element (`k<j>[i<n>]`) of the array keeping `key` per index across the loops over the
   * same collection as the loop `raw` depends on, or null when no other loop uses it (or `raw`
   * depends on no loop). `first` is true in the first of those loops (loops are numbered in
   * source order, which is the order they run in within a run of their region), which finds
   * the array empty and need not read it.
   */
  perIndex(raw: string, key: string): { at: string; first: boolean } | null {
    const region = this.regionOf(raw);
    const parent = region.parent;
    if (region.loop === null || parent === null || region.collection === null) return null;
    // The same value in another loop over the same list differs only in that loop's variables
    // (never in string literals: a field may be called `e0`).
    const own = new RegExp(`"(?:[^"\\\\]|\\\\.)*"|\\b([eino])${region.loop}\\b`, "g");
    const shared = `${parent.loop}|${region.collection}|${key.replace(own, (m, v?: string) => (v ? `${v}@` : m))}`;
    const loops = this.counted.loops.get(shared) ?? new Set<number>();
    this.counted.loops.set(shared, loops.add(region.loop));
    const all = this.counts?.loops.get(shared);
    if (all === undefined || all.size < 2) return null;
    let name = parent.arrays.get(shared);
    if (name === undefined) {
      name = `k${this.next++}`;
      parent.arrays.set(shared, name);
    }
    return { at: `${name}[i${region.loop}]`, first: region.loop === Math.min(...all) };
  }

  /** The innermost region whose loop variables `raw` mentions (a false match inside a string literal only picks a more inner one). */
  private regionOf(raw: string): Region {
    const used = new Set([...raw.matchAll(/\b[eino](\d+)\b/g)].map((m) => Number(m[1])));
    for (let i = this.regions.length - 1; i > 0; i--) {
      const r = this.regions[i]!;
      if (r.loop !== null && used.has(r.loop)) return r;
    }
    return this.regions[0]!;
  }

  /**
   * The variable caching `key` (null when not worth one), whose value is computed from `raw` (generated JS). It lives in
   * the innermost region whose loop variables `raw` mentions; a false match on text inside a
   * string literal only picks a more inner region, which is still correct.
   */
  variable(raw: string, key: string): string | null {
    const region = this.regionOf(raw);
    const id = `${region.loop}|${key}`;
    this.counted.values.set(id, (this.counted.values.get(id) ?? 0) + 1);
    if ((this.counts?.values.get(id) ?? 0) < 2) return null;
    let name = region.vars.get(key);
    if (name === undefined) {
      name = `c${this.next++}`;
      region.vars.set(key, name);
    }
    return name;
  }
}
