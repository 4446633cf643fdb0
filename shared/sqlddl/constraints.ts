/**
 * Table-level constraints and keys: PRIMARY KEY, UNIQUE, FOREIGN KEY … REFERENCES, CHECK,
 * and MySQL's KEY/INDEX/FULLTEXT/SPATIAL index definitions inside CREATE TABLE.
 */
import type { Cursor } from "./cursor.ts";
import { indexTail } from "./column.ts";
import type { ParseContext } from "./context.ts";
import type { ParsedConstraint, ParsedTable, ReferentialAction } from "./types.ts";

/** Words that start a table constraint (after an optional CONSTRAINT name). */
export const TABLE_CONSTRAINT_WORDS = new Set(["PRIMARY", "UNIQUE", "FOREIGN", "CHECK", "EXCLUDE"]);

type Reference = Pick<ParsedConstraint, "references_table" | "references_schema" | "references_columns" | "on_delete" | "on_update">;

/** `REFERENCES t [(cols)] [MATCH …] [ON DELETE a] [ON UPDATE a] [DEFERRABLE …]`. */
export function parseReferences(c: Cursor): Reference {
  c.expect("REFERENCES");
  const target = c.qualifiedName("a referenced table");
  const ref: Reference = {
    references_table: target.name,
    references_schema: target.schema,
    references_columns: c.isPunct("(") ? c.columnList() : null,
    on_delete: null,
    on_update: null,
  };
  for (;;) {
    if (c.accept("MATCH")) c.next();
    else if (c.acceptSeq("ON", "DELETE")) ref.on_delete = action(c);
    else if (c.acceptSeq("ON", "UPDATE")) ref.on_update = action(c);
    else if (c.acceptSeq("NOT", "FOR", "REPLICATION") || c.acceptSeq("NOT", "DEFERRABLE") || c.accept("DEFERRABLE")) continue;
    else if (c.accept("INITIALLY")) c.next();
    else if (c.acceptSeq("NOT", "VALID") || c.acceptSeq("NOT", "ENFORCED") || c.accept("ENFORCED") || c.accept("ENABLE") || c.accept("NOVALIDATE")) continue;
    else return ref;
  }
}

function action(c: Cursor): ReferentialAction {
  if (c.accept("CASCADE")) return "CASCADE";
  if (c.accept("RESTRICT")) return "RESTRICT";
  if (c.acceptSeq("SET", "NULL")) return "SET NULL";
  if (c.acceptSeq("SET", "DEFAULT")) return "SET DEFAULT";
  if (c.acceptSeq("NO", "ACTION")) return "NO ACTION";
  return c.fail("expected a referential action");
}

/**
 * A table constraint at the cursor (after the optional `CONSTRAINT name`, passed in).
 * Returns false when the words there are not a constraint this parser knows.
 */
export function parseTableConstraint(c: Cursor, table: ParsedTable, name: string | null, ctx: ParseContext): boolean {
  const at = c.offset();
  if (c.accept("PRIMARY")) {
    c.expect("KEY");
    keyModifiers(c);
    table.constraints.push(key("primary_key", name, keyColumns(c)));
  } else if (c.accept("UNIQUE")) {
    if (!c.accept("KEY")) c.accept("INDEX");
    keyModifiers(c);
    const indexName = c.isIdent() && !c.is("USING") ? c.ident() : null;
    keyModifiers(c);
    table.constraints.push(key("unique", name ?? indexName, keyColumns(c)));
  } else if (c.accept("FOREIGN")) {
    c.expect("KEY");
    const indexName = c.isIdent() ? c.ident() : null;
    const columns = c.columnList();
    table.constraints.push({ ...parseReferences(c), type: "foreign_key", name: name ?? indexName, columns });
  } else if (c.accept("CHECK")) {
    const expression = c.skipGroup();
    if (!c.acceptSeq("NOT", "FOR", "REPLICATION")) c.acceptSeq("NO", "INHERIT");
    (table.checks ??= []).push({ name, expression });
  } else if (c.accept("EXCLUDE")) {
    c.skipUntil(new Set());
    ctx.warn(at, `skipped EXCLUDE constraint ${name ?? ""} of ${table.table_name} (not modelled)`);
  } else return false;
  indexTail(c);
  if (!c.acceptSeq("NOT", "DEFERRABLE")) c.accept("DEFERRABLE");
  if (c.accept("INITIALLY")) c.next();
  if (c.accept("COMMENT")) c.next();
  return true;
}

/** MySQL `[UNIQUE|FULLTEXT|SPATIAL] KEY|INDEX [name] [USING x] (cols)` inside CREATE TABLE. */
export function parseInlineIndex(c: Cursor, table: ParsedTable, kind: string | null): void {
  const name = c.isIdent() && !c.is("USING") && !c.isPunct("(") ? c.ident() : null;
  keyModifiers(c);
  const columns = keyColumns(c);
  indexTail(c);
  while (c.accept("COMMENT") || c.accept("KEY_BLOCK_SIZE") || c.accept("WITH")) c.next();
  (table.indexes ??= []).push({ name, columns, unique: false, method: kind });
}

function keyModifiers(c: Cursor): void {
  while (c.accept("CLUSTERED") || c.accept("NONCLUSTERED") || c.accept("ASC") || c.accept("DESC")) continue;
  if (!c.acceptSeq("NULLS", "NOT", "DISTINCT")) c.acceptSeq("NULLS", "DISTINCT");
  if (c.accept("USING")) c.next();
}

/** A key's column list; T-SQL and MySQL allow options after it. */
function keyColumns(c: Cursor): string[] {
  const columns = c.columnList();
  keyModifiers(c);
  return columns;
}

function key(type: "primary_key" | "unique", name: string | null, columns: string[]): ParsedConstraint {
  return { type, name, columns, references_table: null, references_columns: null, on_delete: null, on_update: null };
}
