/**
 * Reuse of filtered values in generated code: a template often prints the same value through
 * the same filters many times (`{:table.table_name|singular|pascal:}` in a class name, a type,
 * a function name). Within one run of a unit, or one iteration of a loop, such a value cannot
 * change (the scope is immutable during a render and filters are pure), so the generated code
 * computes it once, into a variable declared where the innermost loop it depends on begins.
 */

/** A place where cache variables are declared: the unit body, or one loop's body. */
interface Region {
  /** The loop's number (its JS variables are e<n>, i<n>, n<n>), null for the unit body. */
  loop: number | null;
  /** Index of the line reserved for the declarations. */
  line: number;
  /** Cache key → variable name. */
  vars: Map<string, string>;
}

/**
 * Tracks regions while a unit is generated. Generation runs twice: the first pass only counts
 * how often each value occurs in its region; the second caches those that occur more than once
 * (a variable for a value used once would only add work).
 */
export class Reuse {
  private readonly regions: Region[] = [];
  private next = 0;
  /** Occurrences per `region|key`, counted by the first pass; null during the first pass. */
  private readonly counts: Map<string, number> | null;
  /** What the first pass counted. */
  readonly counted = new Map<string, number>();

  constructor(counts: Map<string, number> | null) {
    this.counts = counts;
  }

  /** Starts a region whose declarations go on `lines[line]` (a line reserved for them). */
  open(loop: number | null, line: number): void {
    this.regions.push({ loop, line, vars: new Map() });
  }

  /** Ends the innermost region, writing its declarations into the reserved line. */
  close(lines: string[]): void {
    const region = this.regions.pop()!;
    lines[region.line] = region.vars.size ? `let ${[...region.vars.values()].join(", ")};` : "";
  }

  /**
   * The variable caching `key` (null when not worth one), whose value is computed from `raw` (generated JS). It lives in
   * the innermost region whose loop variables `raw` mentions; a false match on text inside a
   * string literal only picks a more inner region, which is still correct.
   */
  variable(raw: string, key: string): string | null {
    const used = new Set([...raw.matchAll(/\b[ein](\d+)\b/g)].map((m) => Number(m[1])));
    let region = this.regions[0]!;
    for (let i = this.regions.length - 1; i > 0; i--) {
      const r = this.regions[i]!;
      if (r.loop !== null && used.has(r.loop)) {
        region = r;
        break;
      }
    }
    const id = `${region.loop}|${key}`;
    this.counted.set(id, (this.counted.get(id) ?? 0) + 1);
    if ((this.counts?.get(id) ?? 0) < 2) return null;
    let name = region.vars.get(key);
    if (name === undefined) {
      name = `c${this.next++}`;
      region.vars.set(key, name);
    }
    return name;
  }
}
