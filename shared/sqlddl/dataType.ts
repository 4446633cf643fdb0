/**
 * Column data types as the five dialects spell them: multi-word names (`double precision`,
 * `character varying`, `timestamp(3) with time zone`, SQLite's free-form `UNSIGNED BIG INT`),
 * parameters (`(10,2)`, `(max)`, MySQL `enum('a','b')`), suffixes (`UNSIGNED`, `CHARACTER SET`,
 * Firebird `SUB_TYPE`), arrays (`text[]`, Firebird `INTEGER [4]`) and qualified user types.
 */
import type { Cursor} from "./cursor.ts";
import { intValue } from "./cursor.ts";
import { lowerCase, Tok } from "./scanner.ts";

/** A parsed data type before domain/user-type resolution. */
export interface DataType {
  /** Lower-case base name, unqualified (`character varying`, `int`, `mpaa_rating`). */
  name: string;
  /** `schema.name` as written when the type was qualified by a non-system schema. */
  qualified: string | null;
  /** The name as written (case kept), for naming a user type or domain. */
  written: string;
  length: number | null;
  scale: number | null;
  unsigned: boolean;
  enumValues: string[] | null;
  arrayDimensions: number;
  charset: string | null;
}

/** Words that end a SQLite free-form type name (they start column constraints). */
const SQLITE_TYPE_END = new Set(["CONSTRAINT", "PRIMARY", "NOT", "NULL", "UNIQUE", "CHECK", "DEFAULT", "COLLATE", "REFERENCES", "GENERATED", "AS", "ON", "AUTOINCREMENT"]);
const SYSTEM_SCHEMAS = new Set(["pg_catalog", "sys", "information_schema"]);
const VARYING_HEADS = new Set(["CHARACTER", "CHAR", "NCHAR", "BIT", "NATIONAL CHARACTER", "NATIONAL CHAR"]);
const INTERVAL_FIELDS = new Set(["YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND", "TO"]);

/** Parses a data type at the cursor. */
export function parseDataType(c: Cursor): DataType {
  const head = c.peek();
  const quotedHead = head.type !== Tok.Word;
  const q = c.qualifiedName("a data type");
  const schema = q.schema && !SYSTEM_SCHEMAS.has(lowerCase(q.schema)) ? q.schema : null;
  const type: DataType = {
    name: !quotedHead && !q.schema ? baseName(c, q.name, head.upper) : lowerCase(q.name),
    qualified: schema ? `${schema}.${q.name}` : null,
    written: q.name,
    length: null,
    scale: null,
    unsigned: false,
    enumValues: null,
    arrayDimensions: 0,
    charset: null,
  };
  if (c.isPunct("(")) parameters(c, type);
  suffixes(c, type);
  return type;
}

/**
 * The lower-case name of an unquoted, unqualified type, which may run on over several words.
 * One ASCII word already in lower case is the name as written, not a copy of it: a dump's
 * every column holds its type name.
 */
function baseName(c: Cursor, written: string, upper: string): string {
  const first = c.dialect === "PostgreSQL" ? written.toUpperCase() : upper;
  const full = multiWordName(c, first);
  return full === first && isAscii(written) ? lowerCase(written) : lowerCase(full);
}

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= 128) return false;
  return true;
}

function multiWordName(c: Cursor, first: string): string {
  let name = first;
  if (c.dialect === "SQLite") {
    while (c.peek().type === Tok.Word && !SQLITE_TYPE_END.has(c.peek().upper)) name += ` ${c.next().upper}`;
    return name;
  }
  if (name === "DOUBLE" && c.accept("PRECISION")) return "DOUBLE PRECISION";
  if (name === "LONG" && c.isAny(new Set(["VARCHAR", "VARBINARY", "RAW", "BYTE"]))) return `LONG ${c.next().upper}`;
  if (name === "NATIONAL" && c.isAny(new Set(["CHARACTER", "CHAR", "VARCHAR"]))) name += ` ${c.next().upper}`;
  if (VARYING_HEADS.has(name) && c.accept("VARYING")) name += " VARYING";
  if (name === "INTERVAL") while (c.isAny(INTERVAL_FIELDS)) name += ` ${c.next().upper}`;
  return name;
}

function parameters(c: Cursor, type: DataType): void {
  if ((type.name === "enum" || type.name === "set") && c.dialect === "MySQL") {
    c.expectPunct("(");
    const values: string[] = [];
    do {
      const t = c.next();
      if (t.type !== Tok.String && t.type !== Tok.Number) c.fail("expected an enum value");
      values.push(t.value);
    } while (c.acceptPunct(","));
    c.expectPunct(")");
    type.enumValues = values;
    return;
  }
  const open = c.i;
  c.expectPunct("(");
  // the first two numbers (null for one too big) go straight into the type: no array for every sized type
  let count = 0;
  let other = false;
  while (!c.atEnd() && !c.isPunct(")")) {
    const t = c.next();
    const n = t.type === Tok.Number ? intValue(t) : t.upper === "MAX" ? -1 : undefined;
    if (n === undefined) {
      if (t.value !== "," || t.type !== Tok.Punct) other = true;
      continue;
    }
    if (count === 0) type.length = n;
    else if (count === 1) type.scale = n;
    count++;
  }
  if (other) {
    c.i = open; // e.g. XML(schema collection), geometry(Point, 4326): not sizes
    c.skipGroup();
    if (count === 0) return;
  } else c.expectPunct(")");
  if (count === 0) type.length = null;
  if (count < 2) type.scale = null;
}

function suffixes(c: Cursor, type: DataType): void {
  for (;;) {
    if ((type.name.startsWith("timestamp") || type.name.startsWith("time")) && (c.is("WITH") || c.is("WITHOUT")) && c.is("TIME", 1) && c.is("ZONE", 2)) {
      type.name += c.next().upper === "WITH" ? " with time zone" : " without time zone";
      c.i += 2;
    } else if (type.name === "interval" && c.isAny(INTERVAL_FIELDS)) {
      while (c.isAny(INTERVAL_FIELDS)) type.name += ` ${c.next().value.toLowerCase()}`;
      if (c.isPunct("(")) parameters(c, type);
    } else if (c.dialect === "MySQL" && c.accept("UNSIGNED")) type.unsigned = true;
    else if (c.dialect === "MySQL" && (c.accept("SIGNED") || c.accept("ZEROFILL") || c.accept("BINARY") || c.accept("ASCII") || c.accept("UNICODE"))) continue;
    else if (c.acceptSeq("CHARACTER", "SET") || c.accept("CHARSET")) type.charset = c.ident("a character set");
    else if (c.dialect === "Firebird" && type.name === "blob" && (c.is("SUB_TYPE") || c.is("SEGMENT"))) firebirdBlob(c, type);
    else if (c.isPunct("[") && c.dialect !== "MSSQL") arrayBounds(c, type);
    else if (c.dialect === "PostgreSQL" && c.accept("ARRAY")) {
      type.arrayDimensions++;
      if (c.isPunct("[")) {
        c.next();
        while (!c.atEnd() && !c.acceptPunct("]")) c.next();
      }
    } else break;
  }
  if (c.dialect === "Firebird" && type.name === "blob" && type.length !== null) {
    // BLOB(segment size, sub_type)
    if (type.scale === 1) type.name = "blob sub_type text";
    type.length = type.scale = null;
  }
}

function firebirdBlob(c: Cursor, type: DataType): void {
  if (c.accept("SUB_TYPE")) {
    const t = c.next();
    if (t.upper === "TEXT" || t.value === "1") type.name = "blob sub_type text";
    else if (t.value !== "0" && t.upper !== "BINARY") type.name = `blob sub_type ${t.value.toLowerCase()}`;
  }
  if (c.acceptSeq("SEGMENT", "SIZE")) c.next();
}

/** `[]`, `[4]`, `[1:5, 0:2]`: one dimension per bracket pair or comma-separated range. */
function arrayBounds(c: Cursor, type: DataType): void {
  c.expectPunct("[");
  type.arrayDimensions++;
  while (!c.atEnd() && !c.isPunct("]")) {
    if (c.next().value === ",") type.arrayDimensions++;
  }
  c.expectPunct("]");
}
