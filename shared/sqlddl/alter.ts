/**
 * ALTER TABLE: the actions dump tools print after CREATE TABLE (pg_dump's `ALTER TABLE ONLY
 * … ADD CONSTRAINT` and `ALTER COLUMN … SET DEFAULT nextval(…)`, T-SQL `WITH CHECK ADD
 * CONSTRAINT` and `ADD CONSTRAINT DF_… DEFAULT … FOR col`, MySQL MODIFY/CHANGE), and the
 * ones migration scripts use (DROP, RENAME). Actions that do not touch the model (OWNER TO,
 * ATTACH PARTITION, ENABLE TRIGGER, …) are passed over.
 */
import type { Cursor } from "./cursor.ts";
import { defaultValue, parseColumn } from "./column.ts";
import { parseInlineIndex, parseTableConstraint, TABLE_CONSTRAINT_WORDS } from "./constraints.ts";
import { parseDataType } from "./dataType.ts";
import type { ParseContext } from "./context.ts";
import type { ParsedField, ParsedTable } from "./types.ts";

const VERBS = new Set(["ADD", "DROP", "ALTER", "MODIFY", "CHANGE", "RENAME", "OWNER", "ATTACH", "DETACH", "ENABLE", "DISABLE", "SET", "RESET", "CLUSTER", "REPLICA", "INHERIT", "NO", "VALIDATE", "ALGORITHM", "LOCK", "AUTO_INCREMENT", "ENGINE", "CONVERT", "DEFAULT", "CHECK", "NOCHECK", "SWITCH", "FORCE", "ORDER", "OF"]);
/** Actions that never change the model, so an unknown table (a view, a sequence) is fine. */
const NOOP_VERBS = new Set(["OWNER", "ENABLE", "DISABLE", "ATTACH", "DETACH", "CLUSTER", "REPLICA", "SET", "RESET", "CHECK", "NOCHECK", "VALIDATE", "INHERIT", "NO"]);

/** What an ALTER TABLE did: changed the model, changed nothing, or was skipped. */
export type AlterOutcome = "modelled" | "noise" | "skipped";

/** Parses `ALTER TABLE …` after the TABLE keyword. */
export function parseAlterTable(c: Cursor, ctx: ParseContext): AlterOutcome {
  const at = c.offset();
  c.acceptSeq("IF", "EXISTS");
  c.accept("ONLY");
  const name = c.qualifiedName("a table name");
  c.acceptPunct("*");
  const table = ctx.builder.findTable(name);
  if (!table) {
    const noop = c.isAny(NOOP_VERBS);
    if (!noop) ctx.warn(at, `ALTER TABLE of ${name.name}, which is not defined earlier, was skipped`, "ALTER TABLE unknown table");
    c.next();
    c.skipStatement();
    return noop ? "noise" : "skipped";
  }
  let verb = "ADD";
  let changed = false;
  do {
    if ((c.acceptSeq("WITH", "CHECK") || c.acceptSeq("WITH", "NOCHECK")) && c.accept("ADD")) verb = "ADD";
    else if (c.isAny(VERBS)) verb = c.next().upper;
    if (!NOOP_VERBS.has(verb)) changed = true;
    action(c, verb, table, ctx);
  } while (c.acceptPunct(","));
  return changed ? "modelled" : "noise";
}

function action(c: Cursor, verb: string, table: ParsedTable, ctx: ParseContext): void {
  switch (verb) {
    case "ADD":
      return add(c, table, ctx);
    case "DROP":
      return drop(c, table, ctx);
    case "ALTER":
      return alterColumn(c, table, ctx);
    case "MODIFY":
    case "CHANGE":
      return modify(c, verb, table, ctx);
    case "RENAME":
      return rename(c, table, ctx);
    case "ATTACH":
      if (c.accept("PARTITION")) {
        const child = ctx.builder.findTable(c.qualifiedName("a partition"));
        const from = c.i;
        c.skipUntil(new Set());
        if (child) child.options = { ...child.options, ...partitionOf(table), partition_bound: c.textFrom(from) };
      }
      c.skipUntil(new Set());
      return;
    default:
      c.skipUntil(new Set()); // OWNER TO, ATTACH PARTITION, ENABLE TRIGGER, … do not change the model
  }
}

function add(c: Cursor, table: ParsedTable, ctx: ParseContext): void {
  if (c.dialect === "MSSQL" && c.accept("DEFAULT")) return namedDefault(c, table, ctx); // ADD DEFAULT (x) FOR col
  if (c.accept("CONSTRAINT")) {
    const name = c.isAny(TABLE_CONSTRAINT_WORDS) ? null : c.ident("a constraint name");
    if (c.accept("DEFAULT")) return namedDefault(c, table, ctx);
    if (!parseTableConstraint(c, table, name, ctx)) c.fail("expected a constraint");
    return;
  }
  if (c.isAny(TABLE_CONSTRAINT_WORDS) && !(c.is("UNIQUE") && (c.is("INDEX", 1) || c.is("KEY", 1)) && c.dialect === "MySQL")) {
    if (parseTableConstraint(c, table, null, ctx)) return;
  }
  if (c.dialect === "MySQL" && (c.is("INDEX") || c.is("KEY") || c.is("FULLTEXT") || c.is("SPATIAL") || c.is("UNIQUE"))) {
    const kind = c.next().upper;
    if (kind !== "INDEX" && kind !== "KEY") c.acceptAny("INDEX", "KEY");
    if (kind === "UNIQUE") {
      const before = table.indexes?.length ?? 0;
      parseInlineIndex(c, table, null);
      const index = table.indexes!.splice(before, 1)[0]!;
      table.constraints.push({ type: "unique", name: index.name, columns: index.columns, references_table: null, references_columns: null, on_delete: null, on_update: null });
    } else parseInlineIndex(c, table, kind === "FULLTEXT" || kind === "SPATIAL" ? kind.toLowerCase() : null);
    return;
  }
  if (c.is("PERIOD") && c.is("FOR", 1)) {
    c.skipUntil(new Set());
    return;
  }
  c.accept("COLUMN");
  c.acceptSeq("IF", "NOT", "EXISTS");
  if (c.isPunct("(")) {
    c.next();
    do addColumn(c, table, ctx);
    while (c.acceptPunct(","));
    c.expectPunct(")");
    return;
  }
  addColumn(c, table, ctx);
}

function addColumn(c: Cursor, table: ParsedTable, ctx: ParseContext): void {
  const at = c.offset();
  const field = parseColumn(c, table, ctx);
  if (ctx.builder.findField(table, field.field_name)) {
    ctx.warn(at, `column ${field.field_name} of ${table.table_name} already exists`);
    return;
  }
  ctx.builder.addField(table, field);
  place(c, table, field, ctx);
}

/** MySQL `FIRST` / `AFTER col`: where an added or changed column goes. */
function place(c: Cursor, table: ParsedTable, field: ParsedField, ctx: ParseContext): void {
  let index = -1;
  if (c.accept("FIRST")) index = 0;
  else if (c.accept("AFTER")) {
    const after = ctx.builder.findField(table, c.ident("a column name"));
    if (after) index = table.fields.indexOf(after) + 1;
  }
  if (index < 0) return;
  table.fields.splice(table.fields.indexOf(field), 1);
  table.fields.splice(index > table.fields.length ? table.fields.length : index, 0, field);
}

/** T-SQL `ADD CONSTRAINT DF_x DEFAULT (expr) FOR col`. */
function namedDefault(c: Cursor, table: ParsedTable, ctx: ParseContext): void {
  const value = defaultValue(c);
  c.expect("FOR");
  column(c, table, ctx, (f) => (f.default_value = value));
  c.acceptSeq("WITH", "VALUES");
}

function drop(c: Cursor, table: ParsedTable, ctx: ParseContext): void {
  const b = ctx.builder;
  const sameName = (a: string | null, name: string) => a !== null && b.key(a) === b.key(name);
  if (c.acceptSeq("PRIMARY", "KEY")) {
    table.constraints = table.constraints.filter((k) => k.type !== "primary_key");
  } else if (c.accept("CONSTRAINT") || c.acceptSeq("FOREIGN", "KEY") || c.accept("INDEX") || c.accept("KEY") || c.accept("CHECK")) {
    c.acceptSeq("IF", "EXISTS");
    const name = c.ident("a constraint name");
    const before = table.constraints.length + (table.indexes?.length ?? 0) + (table.checks?.length ?? 0);
    table.constraints = table.constraints.filter((k) => !sameName(k.name, name));
    table.indexes = table.indexes?.filter((k) => !sameName(k.name, name));
    table.checks = table.checks?.filter((k) => !sameName(k.name, name));
    if (before === table.constraints.length + (table.indexes?.length ?? 0) + (table.checks?.length ?? 0)) {
      ctx.warn(c.offset(), `DROP of ${name} on ${table.table_name}: no such constraint or index`);
    }
  } else if (c.is("PERIOD") || c.is("DEFAULT")) {
    c.skipUntil(new Set());
    return;
  } else {
    c.accept("COLUMN");
    c.acceptSeq("IF", "EXISTS");
    const name = c.ident("a column name");
    const before = table.fields.length;
    table.fields = table.fields.filter((f) => !sameName(f.field_name, name));
    if (before === table.fields.length) ctx.warn(c.offset(), `DROP COLUMN ${name}: ${table.table_name} has no such column`);
    // the engines drop single-column keys on a dropped column with it
    table.constraints = table.constraints.filter((k) => !k.columns.some((col) => sameName(col, name)));
  }
  c.acceptAny("CASCADE", "RESTRICT");
}

function alterColumn(c: Cursor, table: ParsedTable, ctx: ParseContext): void {
  c.accept("COLUMN");
  column(c, table, ctx, (field) => {
    if (c.accept("TYPE") || c.acceptSeq("SET", "DATA", "TYPE")) return retype(c, field);
    if (c.acceptSeq("SET", "DEFAULT")) field.default_value = defaultValue(c);
    else if (c.acceptSeq("DROP", "DEFAULT")) field.default_value = null;
    else if (c.acceptSeq("SET", "NOT", "NULL")) field.is_nullable = false;
    else if (c.acceptSeq("DROP", "NOT", "NULL")) field.is_nullable = true;
    else if (c.acceptSeq("ADD", "GENERATED")) {
      field.identity = c.accept("ALWAYS") ? "always" : (c.acceptSeq("BY", "DEFAULT"), "by_default");
      c.expect("AS");
      c.expect("IDENTITY");
      field.is_auto_increment = true;
      field.is_nullable = false;
      if (c.isPunct("(")) c.skipGroup();
    } else if (c.acceptSeq("DROP", "IDENTITY")) {
      c.acceptSeq("IF", "EXISTS");
      field.is_auto_increment = false;
      field.identity = null;
    } else if (c.accept("TO")) ctx.builder.renameField(table, field, c.ident());
    else if (c.dialect === "MSSQL" && c.isIdent()) {
      retype(c, field);
      if (c.acceptSeq("NOT", "NULL")) field.is_nullable = false;
      else if (c.accept("NULL")) field.is_nullable = true;
    } else c.skipUntil(new Set()); // SET STATISTICS, SET STORAGE, POSITION, …
  });
}

function retype(c: Cursor, field: ParsedField): void {
  const type = parseDataType(c);
  field.field_type = type.name;
  field.length = type.length;
  field.scale = type.scale;
  field.type_name = type.qualified ?? type.written;
  if (c.accept("COLLATE")) field.collation = c.qualifiedName().name;
  if (c.accept("USING")) c.skipUntil(new Set());
}

/** MySQL `MODIFY col def` and `CHANGE old new def`: the definition replaces the column in place. */
function modify(c: Cursor, verb: string, table: ParsedTable, ctx: ParseContext): void {
  c.accept("COLUMN");
  const at = c.offset();
  const old = c.ident("a column name");
  if (verb === "MODIFY") c.i--; // the definition starts with the same name
  const existing = ctx.builder.findField(table, old);
  const replacement = parseColumn(c, table, ctx);
  if (!existing) {
    ctx.warn(at, `${verb} of ${table.table_name}.${old}: no such column`);
    return;
  }
  ctx.builder.replaceField(table, existing, replacement);
  place(c, table, replacement, ctx);
  for (const k of table.constraints) k.columns = k.columns.map((col) => (col === existing.field_name ? replacement.field_name : col));
}

function rename(c: Cursor, table: ParsedTable, ctx: ParseContext): void {
  if (c.accept("TO") || c.accept("AS")) return ctx.builder.renameTable(table, c.qualifiedName().name);
  if (c.accept("CONSTRAINT") || c.accept("INDEX") || c.accept("KEY")) {
    const from = c.ident();
    c.expect("TO");
    const to = c.ident();
    for (const k of [...table.constraints, ...(table.indexes ?? [])]) if (k.name === from) k.name = to;
    return;
  }
  c.accept("COLUMN");
  column(c, table, ctx, (field) => {
    c.expect("TO");
    const to = c.ident();
    for (const k of table.constraints) k.columns = k.columns.map((col) => (col === field.field_name ? to : col));
    ctx.builder.renameField(table, field, to);
  });
}

/** The options that record a PostgreSQL partition's parent (keys propagate to partitions). */
export function partitionOf(parent: ParsedTable): Record<string, string> {
  return parent.schema_name === null ? { partition_of: parent.table_name } : { partition_of: parent.table_name, partition_of_schema: parent.schema_name };
}

/** Runs `fn` on the named column, or warns when the table has no such column. */
function column(c: Cursor, table: ParsedTable, ctx: ParseContext, fn: (field: ParsedField) => void): void {
  const at = c.offset();
  const name = c.ident("a column name");
  const field = ctx.builder.findField(table, name);
  if (field) return fn(field);
  ctx.warn(at, `${table.table_name} has no column ${name}`);
  c.skipUntil(new Set());
}
