/**
 * Default values written for a target dialect. Into its own dialect a default is kept as
 * written; into another only what means the same there survives: literals, booleans, the
 * current date/time, UUID generators. Sequence defaults become the target's own
 * auto-increment instead, and anything else is dropped (the export notes it).
 */
import { literal } from "./names.ts";
import { typeKind } from "./typeKinds.ts";
import type { Dialect, ParsedField } from "../types.ts";

const NOW = /^(now\(\)|current_timestamp(\(\d*\))?|getdate\(\)|sysdatetime\(\)|sysutcdatetime\(\)|getutcdate\(\)|localtimestamp(\(\d*\))?|transaction_timestamp\(\)|statement_timestamp\(\)|clock_timestamp\(\)|current timestamp|datetime\('now'\)|'now')$/i;
const TODAY = /^(current_date|curdate\(\)|current date|date\('now'\)|'today')$/i;
const NUMERIC = new Set(["tinyint", "smallint", "mediumint", "int", "bigint", "decimal", "real", "double", "money", "year"]);
const UUID = /^(gen_random_uuid\(\)|uuid_generate_v4\(\)|newid\(\)|uuid\(\)|newsequentialid\(\))$/i;

/** The default for `target`, or null when it has none or none that means the same there. */
export function renderDefault(target: Dialect, source: Dialect, field: ParsedField): { sql: string | null; dropped: boolean } {
  const value = field.default_value;
  if (value === null) return { sql: null, dropped: false };
  if (/^(nextval\s*\(|next\s+value\s+for\s|gen_id\s*\()/i.test(value)) {
    return { sql: target === source ? value : null, dropped: false }; // the target's own auto-increment takes over
  }
  if (target === source) return { sql: value, dropped: false };
  const sql = translate(target, source, field, stripCasts(value.trim()));
  return { sql, dropped: sql === null };
}

/** Characters a type name of a trailing cast may hold (`character varying(20)[]`, `"my type"`). */
const CAST_TYPE_CHAR = /[\w\s."[\]()]/;
const LINE_BREAK = /[\n\r\u2028\u2029]/;

/**
 * The value before a trailing `::type`, or null. A linear scan: the type is the longest
 * suffix of type characters (which never include `:`), so the cast's `::` must sit right
 * before it. Values spanning lines keep their casts, as before.
 */
function beforeCast(v: string): string | null {
  let start = v.length;
  while (start > 0 && CAST_TYPE_CHAR.test(v[start - 1]!)) start -= 1;
  if (start === v.length || start < 2 || v[start - 1] !== ":" || v[start - 2] !== ":") return null;
  const head = v.slice(0, start - 2);
  return LINE_BREAK.test(head) ? null : head;
}

/**
 * Whether `v` is one parenthesised expression on one line, `(…)`, rather than `(a) op (b)`:
 * no `)` inside is followed by a later `(` (found with two index scans, not a backtracking
 * pattern, which took seconds on defaults like `((((…))))::text`).
 */
function wrappedInParentheses(v: string): boolean {
  if (v.length < 2 || v[0] !== "(" || v[v.length - 1] !== ")" || LINE_BREAK.test(v)) return false;
  const firstClose = v.indexOf(")", 1);
  const lastOpen = v.lastIndexOf("(", v.length - 2);
  return !(firstClose !== -1 && lastOpen !== -1 && firstClose < lastOpen);
}

/** PostgreSQL `'x'::character varying` and `('now'::text)::date` lose their casts. */
export function stripCasts(value: string): string {
  let v = value;
  for (let i = 0; i < 5; i++) {
    const head = beforeCast(v);
    if (head === null) break;
    v = head.trim();
    if (wrappedInParentheses(v)) v = v.slice(1, -1).trim();
  }
  return v;
}

function translate(target: Dialect, source: Dialect, field: ParsedField, v: string): string | null {
  const kind = typeKind(source, field).kind;
  if (/^null$/i.test(v)) return null;
  const temporal = kind === "datetime" || kind === "timestamptz" || kind === "time" || kind === "date";
  // Firebird's 'NOW' is the current time only in a date/time column; elsewhere it is text
  if (NOW.test(v) && (temporal || !/^'now'$/i.test(v))) {
    if (kind === "date") return today(target);
    if (kind === "time") return { PostgreSQL: "CURRENT_TIME", MySQL: "(curtime())", SQLite: "CURRENT_TIME", MSSQL: "CAST(getdate() AS time)", Firebird: "CURRENT_TIME" }[target];
    return target === "MSSQL" ? "getdate()" : "CURRENT_TIMESTAMP";
  }
  if (TODAY.test(v)) return today(target);
  if (UUID.test(v)) return { PostgreSQL: "gen_random_uuid()", MSSQL: "newid()", MySQL: "(uuid())", SQLite: null, Firebird: null }[target];
  if (/^(true|false)$/i.test(v) || (kind === "boolean" && /^'?[01]'?$/.test(v))) {
    const on = /^(true|'?1'?)$/i.test(v);
    if (target === "MSSQL" || target === "SQLite") return on ? "1" : "0";
    return on ? "TRUE" : "FALSE";
  }
  if (/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(v)) return v.replace(/^\+/, "");
  const str = /^(?:N|E|_\w+\s*)?'((?:[^']|'')*)'$/is.exec(v);
  if (str) {
    let text = str[1]!.replace(/''/g, "'");
    if (source === "MySQL" || /^E/i.test(v)) text = text.replace(/\\(.)/g, "$1");
    if (kind === "boolean") return translate(target, source, field, text);
    if (NUMERIC.has(kind) && /^[-+]?(\d+\.?\d*|\.\d+)$/.test(text.trim())) return text.trim(); // MySQL dumps quote numbers
    return literal(target, text);
  }
  return null;
}

function today(target: Dialect): string {
  if (target === "MSSQL") return "CAST(getdate() AS date)";
  if (target === "MySQL") return "(curdate())";
  return "CURRENT_DATE";
}
