/**
 * Helpers the generated code calls (bound once per unit as `$S`, `$T`, `$P`, `$H`, `$L`, `$Q`, `$E`; filters,
 * chains and memo tables as `$F`, `$K`, `$C`).
 * They are small so V8 inlines them into the compiled templates.
 */
import { isDeviceName } from "../portablePaths.ts";
import { filterCaches, filterChains, filters, toText } from "./filters.ts";

const hasOwn = Object.hasOwn;

/** Text of a value, with the common string case first. */
const S = (v: unknown): string => (typeof v === "string" ? v : toText(v));

/** Truth of a condition value: JavaScript truthiness, except that an empty list is false. */
const T = (v: unknown): boolean => (Array.isArray(v) ? v.length > 0 : !!v);

/** Own property `k` of an object, array or string (never an inherited one), else undefined. */
const P = (o: unknown, k: string): unknown =>
  ((typeof o === "object" && o !== null) || typeof o === "string") && hasOwn(o as object, k) ? (o as Record<string, unknown>)[k] : undefined;

/** Whether loop element `o` is an object with own field `k` (unqualified names resolve to it). */
const H = (o: unknown, k: string): boolean => typeof o === "object" && o !== null && hasOwn(o, k);

/**
 * Own field `k` of the first loop element of `es[hi]` down to `es[lo]` that has it with a
 * defined value, else undefined: how unqualified names resolve past a few nested loops.
 */
const L = (k: string, es: unknown[], hi: number, lo: number): unknown => {
  for (let i = hi; i >= lo; i--) {
    const o = es[i];
    if (typeof o === "object" && o !== null && hasOwn(o, k) && (o as Record<string, unknown>)[k] !== undefined) return (o as Record<string, unknown>)[k];
  }
  return undefined;
};

/** Characters a plain path part may not hold: controls, `"`, `*`, `.`, `/`, `:`, `<`, `>`, `?`, `\\`, `|`, `~`, DEL. */
const notPlain = new Uint8Array(128);
for (let c = 0; c < 32; c++) notPlain[c] = 1;
for (const c of '"*./:<>?\\|~\u007f') notPlain[c.charCodeAt(0)] = 1;

/**
 * Whether a value is a plain part of a path: non-empty printable ASCII (so already NFC) without
 * `/`, `\\`, `.`, `~` or a character Windows cannot store, not ending in a space and not a
 * Windows device name (compile.ts decides which file names may rely on that, see
 * paths.ts valuesStayPortable). A character loop over a table: a file name checks one or two
 * short values, and a regular expression's call costs several times the loop (it was a tenth
 * of a repeated file's render).
 */
const Q = (s: string): boolean => {
  const n = s.length;
  if (n === 0 || s.charCodeAt(n - 1) === 32) return false;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c > 127 || notPlain[c] === 1) return false;
  }
  return !isDeviceName(s, 0, n);
};

/** An object with no fields at all (not even inherited ones): what a field of null or undefined is read from. */
const E: Record<string, never> = Object.freeze(Object.create(null) as Record<string, never>);

/** Most names kept by all units together (see N). */
const maxPlaced = 10_000;
let placedCount = 0;
const placedTables = new Set<Map<string, string>>();

/** Keeps `path`, placed for value `key`, in a unit's table; all tables are emptied once they hold maxPlaced names together. */
const N = (table: Map<string, string>, key: string, path: string): void => {
  if (placedCount >= maxPlaced) {
    for (const t of placedTables) t.clear();
    placedTables.clear();
    placedCount = 0;
  }
  table.set(key, path);
  placedTables.add(table);
  placedCount++;
};

/** The helper table handed to every compiled unit. */
export const helpers = { S, T, P, H, L, Q, E, N, F: filters, K: filterChains, C: filterCaches };

/** The `loop` object of a loop at index `i` of `n` elements. */
export const loopObject = (i: number, n: number) => ({ index: i, number: i + 1, first: i === 0, last: i === n - 1, length: n });

/** Indents every non-empty line of `text` by `indent` (standalone includes and code blocks). */
export const indentLines = (text: string, indent: string) => text.replace(/^(?=.)/gm, indent);
