/**
 * CREATE TABLE in the five dialects: the element list (columns, table constraints, MySQL
 * inline indexes, T-SQL PERIOD and INDEX clauses, PostgreSQL LIKE) and the options after
 * it (MySQL ENGINE/CHARSET/COMMENT, SQLite WITHOUT ROWID/STRICT, T-SQL ON [PRIMARY] and
 * WITH (…), PostgreSQL PARTITION BY/INHERITS). PARTITION OF and LIKE copy the parent.
 */
import type { Cursor} from "./cursor.ts";
import { type QualifiedName } from "./cursor.ts";
import { parseColumn, stringValue } from "./column.ts";
import { parseInlineIndex, parseTableConstraint, TABLE_CONSTRAINT_WORDS } from "./constraints.ts";
import { newTable } from "./model.ts";
import { partitionOf } from "./alter.ts";
import { Tok } from "./scanner.ts";
import type { ParseContext } from "./context.ts";
import type { ParsedTable } from "./types.ts";

const MYSQL_INDEX_WORDS = new Set(["KEY", "INDEX", "FULLTEXT", "SPATIAL"]);
/** Words that start the next T-SQL statement of a batch written without semicolons. */
export const STATEMENT_WORDS = new Set(["CREATE", "ALTER", "DROP", "INSERT", "UPDATE", "DELETE", "EXEC", "EXECUTE", "SET", "GRANT", "IF", "PRINT", "USE", "DECLARE", "SELECT", "BEGIN"]);

/** Whether a T-SQL statement ends here: the next one of the batch starts, or the IF block or branch it sits in ends. */
function batchStatementEnds(c: Cursor): boolean {
  return c.dialect === "MSSQL" && (c.isAny(STATEMENT_WORDS) || c.is("ELSE") || c.is("END"));
}

/** Parses `CREATE TABLE …` after the TABLE keyword; returns whether it was modelled. */
export function parseCreateTable(c: Cursor, ctx: ParseContext): boolean {
  const at = c.offset();
  const ifNotExists = c.acceptSeq("IF", "NOT", "EXISTS");
  const name = c.qualifiedName("a table name");
  if (c.dialect === "SQLite" && name.name.toLowerCase().startsWith("sqlite_")) {
    c.drain(); // the engine's own bookkeeping (sqlite_sequence in a .schema dump)
    return true;
  }
  const table = newTable(name);
  if (c.accept("PARTITION")) {
    c.expect("OF");
    const parent = copyFrom(c.qualifiedName("a parent table"), table, ctx, at);
    const from = c.i;
    skipRest(c);
    if (parent) table.options = { ...partitionOf(parent), partition_bound: c.textFrom(from) };
  } else if (c.is("AS") || c.is("OF")) {
    ctx.warn(at, `skipped CREATE TABLE ${name.name} ${c.peek().upper} … (columns come from a query or type)`, "CREATE TABLE AS");
    return false;
  } else if (c.accept("LIKE")) {
    copyFrom(c.qualifiedName("a table to copy"), table, ctx, at);
  } else {
    if (c.accept("EXTERNAL")) {
      c.accept("FILE");
      c.next();
    }
    elements(c, table, ctx);
    tableOptions(c, table, ctx);
  }
  if (!ctx.builder.addTable(table)) {
    if (!ifNotExists) ctx.warn(at, `table ${name.name} is created twice; the first definition is kept`);
  }
  return true;
}

function elements(c: Cursor, table: ParsedTable, ctx: ParseContext): void {
  c.expectPunct("(");
  if (c.acceptPunct(")")) return;
  do {
    if (c.isPunct(")")) break; // T-SQL accepts a trailing comma
    element(c, table, ctx);
    if (!c.isPunct(",") && !c.isPunct(")")) {
      const at = c.offset();
      const word = c.peek().value;
      c.skipUntil(new Set());
      ctx.warn(at, `ignored "${word}…" in the definition of ${table.table_name}`);
    }
  } while (c.acceptPunct(","));
  c.expectPunct(")");
}

function element(c: Cursor, table: ParsedTable, ctx: ParseContext): void {
  const at = c.offset();
  if (c.accept("CONSTRAINT")) {
    const name = c.isAny(TABLE_CONSTRAINT_WORDS) ? null : c.ident("a constraint name");
    if (!parseTableConstraint(c, table, name, ctx)) c.fail("expected PRIMARY KEY, UNIQUE, FOREIGN KEY or CHECK");
    return;
  }
  if (c.isAny(TABLE_CONSTRAINT_WORDS) && (c.peek(1).type === Tok.Word || c.isPunct("(", 1))) {
    if (parseTableConstraint(c, table, null, ctx)) return;
  }
  if (c.dialect === "MySQL" && c.isAny(MYSQL_INDEX_WORDS)) {
    const kind = c.next().upper;
    if (kind === "FULLTEXT" || kind === "SPATIAL") c.acceptAny("KEY", "INDEX");
    parseInlineIndex(c, table, kind === "FULLTEXT" || kind === "SPATIAL" ? kind.toLowerCase() : null);
    return;
  }
  if (c.dialect === "MSSQL" && c.is("INDEX") && c.isIdent(1)) {
    c.next();
    const name = c.ident();
    while (c.accept("CLUSTERED") || c.accept("NONCLUSTERED") || c.accept("COLUMNSTORE")) continue;
    (table.indexes ??= []).push({ name, columns: c.isPunct("(") ? c.columnList() : [], unique: false });
    c.skipUntil(new Set());
    return;
  }
  if (c.is("PERIOD") && c.is("FOR", 1)) {
    c.skipUntil(new Set());
    return;
  }
  if (c.is("LIKE") && c.dialect !== "SQLite") {
    c.next();
    copyFrom(c.qualifiedName("a table to copy"), table, ctx, at);
    c.skipUntil(new Set());
    return;
  }
  const field = parseColumn(c, table, ctx);
  if (ctx.builder.findField(table, field.field_name)) ctx.warn(at, `column ${field.field_name} of ${table.table_name} is defined twice`);
  else ctx.builder.addField(table, field);
}

function copyFrom(source: QualifiedName, table: ParsedTable, ctx: ParseContext, at: number): ParsedTable | undefined {
  const parent = ctx.builder.findTable(source);
  if (!parent) {
    ctx.warn(at, `${table.table_name} copies ${source.name}, which is not defined earlier; its columns are unknown`);
    return undefined;
  }
  table.fields.push(...parent.fields.map((f) => ({ ...f, is_primary_key: false })));
  return parent;
}

function tableOptions(c: Cursor, table: ParsedTable, ctx: ParseContext): void {
  const options: Record<string, string> = {};
  while (!c.atEnd()) {
    if (batchStatementEnds(c)) break;
    c.acceptPunct(",");
    if (c.accept("ENGINE") || c.accept("TYPE")) options.engine = optionValue(c);
    else if (c.accept("DEFAULT") && !c.is("CHARSET") && !c.is("CHARACTER") && !c.is("COLLATE")) continue;
    else if (c.acceptSeq("CHARACTER", "SET") || c.accept("CHARSET")) options.charset = optionValue(c);
    else if (c.accept("COLLATE")) options.collation = optionValue(c);
    else if (c.accept("COMMENT")) table.comment = stringValue(c);
    else if (c.acceptSeq("WITHOUT", "ROWID")) options.without_rowid = "true";
    else if (c.dialect === "SQLite" && c.accept("STRICT")) options.strict = "true";
    else if (c.accept("INHERITS")) inherit(c, table, ctx);
    else if (c.acceptSeq("PARTITION", "BY")) {
      options.partition_by = partitionText(c);
    } else if (c.isPunct("(")) c.skipGroup();
    else {
      const t = c.next();
      if (t.type === Tok.Word && t.upper === "WITH" && c.isPunct("(")) c.skipGroup();
    }
  }
  if (Object.keys(options).length) table.options = { ...table.options, ...options };
}

/** PostgreSQL INHERITS (a, b): the parents' columns come first, then the table's own. */
function inherit(c: Cursor, table: ParsedTable, ctx: ParseContext): void {
  const at = c.offset();
  c.expectPunct("(");
  const inherited: ParsedTable["fields"] = [];
  const names = new Set<string>();
  do {
    const parent = ctx.builder.findTable(c.qualifiedName("a parent table"));
    if (!parent) ctx.warn(at, `${table.table_name} inherits from a table not defined earlier; its columns are unknown`);
    for (const f of parent?.fields ?? []) {
      if (names.has(f.field_name)) continue;
      names.add(f.field_name);
      inherited.push({ ...f, is_primary_key: false });
    }
  } while (c.acceptPunct(","));
  c.expectPunct(")");
  const own = table.fields.filter((f) => !names.has(f.field_name));
  table.fields = [...inherited, ...own];
  (table.options ??= {}).inherits = "true";
}

function optionValue(c: Cursor): string {
  c.acceptPunct("=");
  const t = c.next();
  return t.value;
}

function partitionText(c: Cursor): string {
  const from = c.i;
  while (!c.atEnd() && !batchStatementEnds(c)) {
    if (c.isPunct("(")) c.skipGroup();
    else c.next();
  }
  return c.textFrom(from);
}

function skipRest(c: Cursor): void {
  while (!c.atEnd()) c.next();
}
