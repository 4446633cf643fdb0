/**
 * Column definitions: name, data type (optional in SQLite, absent for T-SQL and Firebird
 * computed columns) and the column options of all five dialects. Inline PRIMARY KEY,
 * UNIQUE and REFERENCES become table constraints, as the engines record them.
 */
import type { Cursor} from "./cursor.ts";
import { intValue } from "./cursor.ts";
import { parseDataType } from "./dataType.ts";
import { parseReferences } from "./constraints.ts";
import { Tok } from "./scanner.ts";
import type { ParseContext } from "./context.ts";
import type { ParsedField, ParsedTable } from "./types.ts";

/** Words that end a default or other option expression at depth 0. */
export const OPTION_WORDS = new Set([
  "NOT", "NULL", "PRIMARY", "UNIQUE", "REFERENCES", "CHECK", "CONSTRAINT", "DEFAULT", "COLLATE", "AUTO_INCREMENT",
  "AUTOINCREMENT", "IDENTITY", "COMMENT", "ON", "GENERATED", "AS", "WITH", "ROWGUIDCOL", "SPARSE", "FOR", "CHARACTER",
  "KEY", "STORED", "VIRTUAL", "PERSISTENT", "PERSISTED", "INVISIBLE", "VISIBLE", "COLUMN_FORMAT", "STORAGE", "COMPRESSION",
  "HIDDEN", "MASKED", "FILESTREAM", "ENCRYPTED", "COMPUTED", "SERIAL", "FIRST", "AFTER",
]);
const NO_TYPE = new Set(["CONSTRAINT", "PRIMARY", "NOT", "NULL", "UNIQUE", "CHECK", "DEFAULT", "REFERENCES", "COLLATE", "GENERATED", "AS"]);

/** A fresh field with the defaults every dialect shares (nullable, no default). */
export function newField(name: string): ParsedField {
  return {
    field_name: name,
    field_type: "",
    length: null,
    scale: null,
    is_nullable: true,
    is_auto_increment: false,
    is_primary_key: false,
    default_value: null,
    comment: null,
  };
}

/** Parses a column definition at the cursor into `table` (field plus inline constraints). */
export function parseColumn(c: Cursor, table: ParsedTable, ctx: ParseContext): ParsedField {
  const field = newField(c.ident("a column name"));
  if (c.accept("AS") && (c.dialect === "MSSQL" || c.dialect === "SQLite")) {
    computed(c, field); // T-SQL computed column: no type
  } else if (c.dialect === "Firebird" && (c.is("COMPUTED") || (c.is("GENERATED") && c.is("ALWAYS", 1) && c.is("AS", 2) && !c.is("IDENTITY", 3)))) {
    if (!c.accept("COMPUTED")) c.acceptSeq("GENERATED", "ALWAYS", "AS");
    c.accept("BY");
    computed(c, field);
  } else if (!c.isAny(NO_TYPE) && c.isIdent()) {
    const type = parseDataType(c);
    field.field_type = type.name;
    field.length = type.length;
    field.scale = type.scale;
    field.type_name = type.qualified ?? type.written; // kept only if it names a user type (finalize)
    if (type.unsigned) field.is_unsigned = true;
    if (type.enumValues) field.enum_values = type.enumValues;
    if (type.arrayDimensions) field.array_dimensions = type.arrayDimensions;
    if (type.charset) field.charset = type.charset;
    if (c.dialect === "MySQL" && type.name === "serial") uniqueKey(table, field); // SERIAL: BIGINT UNSIGNED NOT NULL AUTO_INCREMENT UNIQUE
  }
  columnOptions(c, field, table, ctx);
  return field;
}

function columnOptions(c: Cursor, field: ParsedField, table: ParsedTable, ctx: ParseContext): void {
  while (!c.atEnd() && !c.isPunct(",") && !c.isPunct(")")) {
    if (c.dialect === "MySQL" && (c.is("FIRST") || c.is("AFTER"))) return; // ALTER TABLE placement
    let name: string | null = null;
    if (c.accept("CONSTRAINT")) name = c.isAny(CONSTRAINT_KINDS) ? null : c.ident("a constraint name");
    if (c.acceptSeq("NOT", "NULL")) {
      field.is_nullable = false;
      conflictClause(c);
      c.accept("ENABLE");
    } else if (c.accept("NULL")) field.is_nullable = true;
    else if (c.accept("PRIMARY")) {
      c.expect("KEY");
      while (c.accept("ASC") || c.accept("DESC") || c.accept("CLUSTERED") || c.accept("NONCLUSTERED")) continue;
      conflictClause(c);
      indexTail(c);
      table.constraints.push({ type: "primary_key", name, columns: [field.field_name], references_table: null, references_columns: null, on_delete: null, on_update: null });
      if (c.accept("AUTOINCREMENT")) markAutoincrement(c, field);
    } else if (c.accept("UNIQUE")) {
      c.accept("KEY");
      while (c.accept("CLUSTERED") || c.accept("NONCLUSTERED")) continue;
      conflictClause(c);
      indexTail(c);
      table.constraints.push({ type: "unique", name, columns: [field.field_name], references_table: null, references_columns: null, on_delete: null, on_update: null });
    } else if (c.is("REFERENCES")) {
      table.constraints.push({ ...parseReferences(c), type: "foreign_key", name, columns: [field.field_name] });
    } else if (c.accept("CHECK")) {
      const expression = c.skipGroup();
      c.acceptSeq("NOT", "FOR", "REPLICATION");
      (table.checks ??= []).push({ name, expression });
    } else if (c.accept("DEFAULT")) {
      field.default_value = defaultValue(c);
      if (c.dialect === "MSSQL" && c.accept("WITH")) c.accept("VALUES");
    } else if (c.accept("COLLATE")) field.collation = c.qualifiedName("a collation").name;
    else if (c.acceptSeq("CHARACTER", "SET") || c.accept("CHARSET")) field.charset = c.ident("a character set");
    else if (c.accept("AUTO_INCREMENT")) field.is_auto_increment = true;
    else if (c.accept("AUTOINCREMENT")) markAutoincrement(c, field);
    else if (c.accept("IDENTITY")) {
      field.is_auto_increment = true;
      field.is_nullable = false;
      if (c.isPunct("(")) c.skipGroup();
      c.acceptSeq("NOT", "FOR", "REPLICATION");
    } else if (c.is("GENERATED") || c.is("AS")) generated(c, field);
    else if (c.accept("COMMENT")) field.comment = stringValue(c);
    else if (c.acceptSeq("ON", "UPDATE")) field.on_update = c.expression(OPTION_WORDS);
    else if (c.acceptSeq("SERIAL", "DEFAULT", "VALUE")) {
      field.is_auto_increment = true;
      field.is_nullable = false;
      uniqueKey(table, field);
    }
    else if (c.acceptSeq("NOT", "FOR", "REPLICATION") || c.accept("ROWGUIDCOL") || c.accept("SPARSE") || c.accept("FILESTREAM") || c.accept("HIDDEN")) continue;
    else if (c.accept("INVISIBLE") || c.accept("VISIBLE")) continue;
    else if (c.accept("COLUMN_FORMAT") || c.accept("STORAGE") || c.accept("COMPRESSION")) c.next();
    else if (c.accept("MASKED") || c.accept("ENCRYPTED")) {
      c.accept("WITH");
      if (c.isPunct("(")) c.skipGroup();
    } else {
      const at = c.offset();
      const word = c.peek().value;
      if (!c.skipUntil(OPTION_WORDS)) c.next();
      ctx.warn(at, `ignored column option "${word}" of ${table.table_name}.${field.field_name}`);
    }
  }
}

function uniqueKey(table: ParsedTable, field: ParsedField): void {
  table.constraints.push({ type: "unique", name: null, columns: [field.field_name], references_table: null, references_columns: null, on_delete: null, on_update: null });
}

const CONSTRAINT_KINDS = new Set(["PRIMARY", "UNIQUE", "CHECK", "FOREIGN", "REFERENCES", "DEFAULT", "NOT", "NULL"]);

/** `AUTOINCREMENT`: SQLite's keyword (values never reused), also accepted as MySQL's spelling elsewhere. */
function markAutoincrement(c: Cursor, field: ParsedField): void {
  field.is_auto_increment = true;
  if (c.dialect === "SQLite") field.sqlite_autoincrement = true;
}

/** SQLite `ON CONFLICT ROLLBACK|ABORT|FAIL|IGNORE|REPLACE`. */
function conflictClause(c: Cursor): void {
  if (c.is("ON") && c.is("CONFLICT", 1)) c.i += 3;
}

/** Index options after an inline key: `WITH (…)`, `ON [PRIMARY]`, `USING INDEX TABLESPACE x`. */
export function indexTail(c: Cursor): void {
  for (;;) {
    if (c.accept("WITH") && c.isPunct("(")) c.skipGroup();
    else if (c.is("ON") && !c.is("DELETE", 1) && !c.is("UPDATE", 1) && !c.is("CONFLICT", 1) && c.isIdent(1)) c.i += 2;
    else if (c.acceptSeq("USING", "INDEX")) {
      if (c.accept("TABLESPACE")) c.next();
    } else if (c.accept("USING")) c.next();
    else return;
  }
}

/** A default value: its text as written without wrapping parentheses; null for NULL. */
export function defaultValue(c: Cursor): string | null {
  const from = c.i;
  c.expression(OPTION_WORDS);
  const layers = wrappingParentheses(c, from, c.i);
  const first = c.tokens[from + layers]!;
  const last = c.tokens[c.i - 1 - layers]!;
  const text = c.text.slice(first.start, last.end);
  return first === last && first.type === Tok.Word && first.upper === "NULL" ? null : text;
}

/**
 * How many parenthesis pairs wrap the whole token range `[from, to)`, in one pass:
 * the leading `(` run and trailing `)` run, capped by the lowest depth between them.
 */
function wrappingParentheses(c: Cursor, from: number, to: number): number {
  let lead = 0;
  while (from + lead < to && isPunctAt(c, from + lead, "(")) lead++;
  let trail = 0;
  while (to - 1 - trail > from + lead - 1 && isPunctAt(c, to - 1 - trail, ")")) trail++;
  let layers = Math.min(lead, trail);
  let depth = lead;
  for (let k = from + lead; k < to - trail && layers > 0; k++) {
    if (isPunctAt(c, k, "(")) depth++;
    else if (isPunctAt(c, k, ")")) depth--;
    layers = Math.min(layers, depth);
  }
  return to - from - 2 * layers >= 1 ? layers : Math.max(0, layers - 1);
}

/** Whether token `k` of the cursor's statement is the punctuation `ch` (a function, not a closure per call). */
function isPunctAt(c: Cursor, k: number, ch: string): boolean {
  const t = c.tokens[k]!;
  return t.type === Tok.Punct && t.value === ch;
}

/** `GENERATED … AS IDENTITY`, `GENERATED ALWAYS AS (expr)`, `AS (expr) STORED`, T-SQL `AS ROW START`. */
function generated(c: Cursor, field: ParsedField): void {
  if (c.accept("GENERATED")) {
    const always = c.accept("ALWAYS");
    if (!always) c.acceptSeq("BY", "DEFAULT");
    c.acceptSeq("ON", "NULL");
    c.expect("AS");
    if (c.accept("IDENTITY")) {
      field.is_auto_increment = true;
      field.is_nullable = false; // identity columns are NOT NULL
      field.identity = always ? "always" : "by_default";
      if (c.isPunct("(")) c.skipGroup();
      return;
    }
    if (c.accept("ROW") || c.accept("TRANSACTION_ID") || c.accept("SEQUENCE_NUMBER")) {
      c.acceptAny("START", "END");
      c.accept("HIDDEN");
      return;
    }
  } else c.expect("AS");
  computed(c, field);
}

function computed(c: Cursor, field: ParsedField): void {
  field.computed = c.isPunct("(") ? c.skipGroup() : c.expression(OPTION_WORDS);
  field.computed_stored = false;
  if (c.accept("STORED") || c.accept("PERSISTED") || c.accept("PERSISTENT")) field.computed_stored = true;
  else c.accept("VIRTUAL");
}

/** A string literal's value (comments, enum labels). */
export function stringValue(c: Cursor): string {
  c.acceptPunct("=");
  if (c.peek().type !== Tok.String) c.fail("expected a string");
  const t = c.next();
  return t.value;
}

/** A possibly signed integer literal. */
export function signedInt(c: Cursor): number | null {
  const negative = c.acceptPunct("-");
  c.acceptPunct("+");
  const n = intValue(c.next());
  return n === null ? null : negative ? -n : n;
}
