/**
 * Placeholder filters (`{:name|pascal:}`) and the one rule that turns a value into text.
 * Case filters split a name into words at `_`, `-`, spaces, dots and case changes
 * (`userID` → user ID, `HTTPServer` → HTTP Server); digits stay with the word before them
 * (`address2Line` → address2 Line). Results of every filter but `json` are memoised: templates
 * apply the same filter to the same few hundred names over and over (`upper` too: its table read
 * costs less than the new string it would otherwise make at every use).
 */
import { pluralize, singularize } from "./inflect.ts";

/** Text of a value: strings as they are, null and undefined empty, objects as JSON. */
export function toText(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "";
  if (typeof value === "object") return JSON.stringify(value) ?? "";
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value);
  return "";
}

const isUpper = (c: string) => c !== c.toLowerCase();
const isLower = (c: string) => c !== c.toUpperCase();

/** Splits a name into words. */
export function words(name: string): string[] {
  const out: string[] = [];
  for (const chunk of name.split(/[^\p{L}\p{N}]+/u)) {
    let start = 0;
    for (let i = 1; i < chunk.length; i++) {
      const c = chunk[i]!;
      if (!isUpper(c)) continue;
      const prev = chunk[i - 1]!;
      const next = chunk[i + 1];
      // userId → user|Id, v2Name → v2|Name, HTTPServer → HTTP|Server.
      if (isLower(prev) || /\p{N}/u.test(prev) || (isUpper(prev) && next !== undefined && isLower(next))) {
        out.push(chunk.slice(start, i));
        start = i;
      }
    }
    if (chunk.length > start) out.push(chunk.slice(start));
  }
  return out;
}

const capital = (w: string) => w.charAt(0).toUpperCase() + w.slice(1).toLowerCase();

/** Memo tables of the memoised filters by name (and of chains, see memoChain); compiled templates read them directly (see codegen). */
export const filterCaches: Record<string, Map<string, string>> = {};

/**
 * Longest text memoised. The tables live as long as the process and are cleared only at
 * 10,000 entries, so long values (text variables, literals) stayed in them with their results
 * across renders: a table of megabyte values would hold gigabytes, and there is one per filter
 * and per chain. Names are short, and a long text costs more to filter than a lookup saves.
 */
export const MAX_MEMO_CHARS = 256;

/** Memoises a string → string filter over a bounded table (cleared when full, never replaced). */
function memo(name: string, fn: (s: string) => string): (value: unknown) => string {
  const table = (filterCaches[name] = new Map<string, string>());
  return (value) => {
    const s = toText(value);
    if (s.length > MAX_MEMO_CHARS) return fn(s);
    let r = table.get(s);
    if (r === undefined) {
      r = fn(s);
      if (table.size >= 10_000) table.clear();
      table.set(s, r);
    }
    return r;
  };
}

/** The filters by name; each takes any value and returns its filtered form. */
export const filters: Record<string, (value: unknown) => unknown> = {
  pascal: memo("pascal", (s) => words(s).map(capital).join("")),
  camel: memo("camel", (s) =>
    words(s)
      .map((w, i) => (i === 0 ? w.toLowerCase() : capital(w)))
      .join(""),
  ),
  snake: memo("snake", (s) => words(s).join("_").toLowerCase()),
  kebab: memo("kebab", (s) => words(s).join("-").toLowerCase()),
  upper: memo("upper", (s) => s.toUpperCase()),
  lower: memo("lower", (s) => s.toLowerCase()),
  plural: memo("plural", pluralize),
  singular: memo("singular", singularize),
  json: (value) => JSON.stringify(value) ?? "null",
};

/** Composed memoised filters by chain (`singular|pascal`), made by memoChain as templates compile. */
export const filterChains: Record<string, (value: unknown) => string> = {};
/** Most chains kept: each has a memo table, so their number bounds the memory the tables take. */
const maxChains = 64;
let chainCount = 0;

/**
 * The key of the memoised composition of `names` (memoised filters, applied in order), made on
 * first use, or null once `maxChains` exist. A compiled template reads a chain's table once
 * where it would read each filter's in turn: for values that vary per file (table names),
 * those reads miss the processor's caches and cost more than the rest of a placeholder.
 */
export function memoChain(names: string[]): string | null {
  const key = names.join("|");
  if (Object.hasOwn(filterChains, key)) return key;
  if (chainCount >= maxChains) return null;
  const steps = names.map((n) => filters[n]!);
  filterChains[key] = memo(key, (s) => steps.reduce<unknown>((v, step) => step(v), s) as string);
  chainCount++;
  return key;
}

/** Names of the filters, for error messages. */
export const filterNames = Object.keys(filters);
