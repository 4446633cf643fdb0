/**
 * The statements around tables that change what a column means or carries: CREATE INDEX
 * (unique plain-column indexes become unique keys), sequences and generators, domains and
 * user types (resolved into columns at the end), PostgreSQL enums, comments (COMMENT ON,
 * T-SQL sp_addextendedproperty), DROP TABLE, and Firebird triggers that fill a column from
 * a generator (which makes it auto-incremented).
 */
import type { Cursor} from "./cursor.ts";
import { BATCH_STATEMENT_WORDS, type QualifiedName } from "./cursor.ts";
import { defaultValue, signedInt } from "./column.ts";
import { parseDataType } from "./dataType.ts";
import { Tok } from "./scanner.ts";
import type { ParseContext } from "./context.ts";

/** `CREATE [UNIQUE] … INDEX name ON table (…)`, after INDEX; `unique`/`kind` from the words before. */
export function parseCreateIndex(c: Cursor, ctx: ParseContext, unique: boolean, kind: string | null): boolean {
  const at = c.offset();
  c.accept("CONCURRENTLY");
  c.acceptSeq("IF", "NOT", "EXISTS");
  const name = c.is("ON") ? null : c.qualifiedName("an index name").name;
  let method = kind;
  if (c.accept("USING")) method = c.next().value.toLowerCase();
  c.expect("ON");
  c.accept("ONLY");
  const tableName = c.qualifiedName("a table name");
  const table = ctx.builder.findTable(tableName);
  if (!table) {
    ctx.warn(at, `index ${name ?? ""} on ${tableName.name}, which is not defined earlier, was skipped`, "CREATE INDEX unknown table");
    c.skipStatement();
    return false;
  }
  if (c.accept("USING")) method = c.next().value.toLowerCase();
  const parts: string[] = [];
  let plain = true;
  if (c.accept("COMPUTED")) {
    c.accept("BY");
    parts.push(c.skipGroup());
    plain = false;
  } else if (c.isPunct("(")) {
    c.expectPunct("(");
    do {
      const from = c.i;
      if (c.isIdent() && (c.isPunct(",", 1) || c.isPunct(")", 1) || isKeyPartOption(c, 1) || isPrefixLength(c))) {
        parts.push(c.ident());
        if (c.isPunct("(")) c.skipGroup();
        c.skipKeyPartOptions();
        if (c.isIdent() && !c.isPunct(",") && !c.isPunct(")")) c.qualifiedName(); // operator class
      } else {
        c.expression(new Set(["ASC", "DESC", "NULLS", "COLLATE"]));
        c.skipKeyPartOptions();
        parts.push(c.textFrom(from));
        plain = false;
      }
    } while (c.acceptPunct(","));
    c.expectPunct(")");
  }
  let where: string | null = null;
  while (!c.atEnd()) {
    if (c.accept("WHERE")) {
      const from = c.i;
      while (!c.atEnd() && !c.is("WITH") && !c.is("TABLESPACE")) c.next();
      where = c.textFrom(from);
    } else if (c.isPunct("(")) c.skipGroup();
    else if (ctx.dialect === "MSSQL" && c.isAny(BATCH_STATEMENT_WORDS)) break;
    else c.next();
  }
  if (unique && plain && where === null) {
    table.constraints.push({ type: "unique", name, columns: parts, references_table: null, references_columns: null, on_delete: null, on_update: null });
  } else (table.indexes ??= []).push({ name, columns: parts, unique, method, where });
  return true;
}

/** MySQL `col(10)`: an index on a column prefix is still an index on the column. */
function isPrefixLength(c: Cursor): boolean {
  return c.dialect === "MySQL" && c.isPunct("(", 1) && c.peek(2).type === Tok.Number && c.isPunct(")", 3);
}

function isKeyPartOption(c: Cursor, k: number): boolean {
  const t = c.peek(k);
  return t.type === Tok.Word && (t.upper === "ASC" || t.upper === "DESC" || t.upper === "NULLS" || t.upper === "COLLATE" || (c.dialect === "PostgreSQL" && c.isPunct(")", k + 1)));
}

/** `CREATE SEQUENCE|GENERATOR name [START WITH n] [INCREMENT BY n] …`. */
export function parseCreateSequence(c: Cursor, ctx: ParseContext): void {
  c.acceptSeq("IF", "NOT", "EXISTS");
  const q = c.qualifiedName("a sequence name");
  let start: number | null = null;
  let increment: number | null = null;
  while (!c.atEnd()) {
    if (c.accept("START")) {
      c.accept("WITH");
      start = signedInt(c);
    } else if (c.accept("INCREMENT")) {
      c.accept("BY");
      increment = signedInt(c);
    } else if (c.accept("AS")) parseDataType(c);
    else c.next();
  }
  ctx.builder.sequences.push({ name: q.name, schema_name: q.schema, start, increment });
}

/** `CREATE DOMAIN name [AS] type [DEFAULT x] [NOT NULL] [CHECK (…)]`; T-SQL `CREATE TYPE name FROM type`. */
export function parseCreateDomain(c: Cursor, ctx: ParseContext): void {
  const q = c.qualifiedName("a domain name");
  c.acceptAny("AS", "FROM");
  const type = parseDataType(c);
  const domain = {
    name: q.name,
    schema_name: q.schema,
    field_type: type.name,
    length: type.length,
    scale: type.scale,
    is_nullable: true,
    default_value: null as string | null,
    check: null as string | null,
  };
  while (!c.atEnd()) {
    if (c.accept("CONSTRAINT")) c.ident();
    else if (c.accept("DEFAULT")) domain.default_value = defaultValue(c);
    else if (c.acceptSeq("NOT", "NULL")) domain.is_nullable = false;
    else if (c.accept("NULL")) domain.is_nullable = true;
    else if (c.accept("CHECK")) domain.check = c.skipGroup();
    else if (c.accept("COLLATE")) c.qualifiedName();
    else c.next();
  }
  ctx.builder.domains.set(ctx.builder.key(q.name), domain);
}

/** PostgreSQL `CREATE TYPE name AS ENUM (…)`; returns false for other kinds of type. */
export function parseCreateType(c: Cursor, ctx: ParseContext): boolean {
  const q = c.qualifiedName("a type name");
  if (c.is("FROM")) {
    c.i -= q.schema ? 3 : 1;
    parseCreateDomain(c, ctx);
    return true;
  }
  if (!c.acceptSeq("AS", "ENUM")) return false;
  c.expectPunct("(");
  const values: string[] = [];
  while (!c.atEnd() && !c.isPunct(")")) {
    const t = c.next();
    if (t.type === Tok.String) values.push(t.value);
  }
  c.expectPunct(")");
  ctx.builder.enums.set(ctx.builder.key(q.name), { name: q.name, schema_name: q.schema, values });
  return true;
}

/** `COMMENT ON TABLE t IS '…'` / `COMMENT ON COLUMN t.c IS '…'`; false for other objects. */
export function parseCommentOn(c: Cursor, ctx: ParseContext): boolean {
  c.expect("ON");
  const kind = c.next().upper;
  if (kind !== "TABLE" && kind !== "COLUMN") return false;
  const parts = [c.ident()];
  while (c.acceptPunct(".")) parts.push(c.ident());
  c.expect("IS");
  const t = c.next();
  const text = t.type === Tok.String ? t.value : null;
  const column = kind === "COLUMN" ? parts.pop()! : null;
  const q: QualifiedName = { name: parts[parts.length - 1]!, schema: parts.length > 1 ? parts[parts.length - 2]! : null };
  return setComment(ctx, q, column, text);
}

/** T-SQL `EXEC sys.sp_addextendedproperty 'MS_Description', 'text', 'SCHEMA', s, 'TABLE', t[, 'COLUMN', c]`. */
export function parseExtendedProperty(c: Cursor, ctx: ParseContext): boolean {
  const args = new Map<string, string | null>();
  const positional = ["@name", "@value", "@level0type", "@level0name", "@level1type", "@level1name", "@level2type", "@level2name"];
  let index = 0;
  while (!c.atEnd()) {
    let key = positional[index++] ?? "";
    if (c.peek().type === Tok.Var && c.isPunct("=", 1)) {
      key = c.next().value.toLowerCase();
      c.next();
    }
    const t = c.next();
    args.set(key, t.type === Tok.Word && t.upper === "NULL" ? null : t.value);
    if (!c.acceptPunct(",")) break;
  }
  const name = args.get("@name")?.toLowerCase();
  if ((name !== "ms_description" && name !== "description") || args.get("@level1type")?.toUpperCase() !== "TABLE") return false;
  const table: QualifiedName = { schema: args.get("@level0name") ?? null, name: args.get("@level1name") ?? "" };
  const level2 = args.get("@level2type")?.toUpperCase();
  if (level2 && level2 !== "COLUMN") return false;
  return setComment(ctx, table, level2 ? (args.get("@level2name") ?? null) : null, args.get("@value") ?? null);
}

function setComment(ctx: ParseContext, q: QualifiedName, column: string | null, text: string | null): boolean {
  const table = ctx.builder.findTable(q);
  if (!table) return false;
  if (column === null) {
    table.comment = text;
    return true;
  }
  const field = ctx.builder.findField(table, column);
  if (field) field.comment = text;
  return field !== undefined;
}

/** `DROP TABLE [IF EXISTS] a, b [CASCADE]`. */
export function parseDropTable(c: Cursor, ctx: ParseContext): void {
  c.acceptSeq("IF", "EXISTS");
  do ctx.builder.dropTable(c.qualifiedName("a table name"));
  while (c.acceptPunct(","));
}

/**
 * A Firebird trigger `FOR t [ACTIVE] BEFORE INSERT … NEW.col = GEN_ID(gen, 1)` (or `NEXT VALUE
 * FOR gen`) makes `col` auto-incremented. Returns whether the trigger had that shape.
 */
export function parseGeneratorTrigger(c: Cursor, ctx: ParseContext): boolean {
  c.qualifiedName("a trigger name");
  let table: QualifiedName | null = null;
  let beforeInsert = false;
  while (!c.atEnd() && !c.is("AS") && !c.is("BEGIN")) {
    if (c.accept("FOR") || c.accept("ON")) table = c.qualifiedName("a table name");
    else if (c.accept("BEFORE")) beforeInsert = c.is("INSERT") || c.is("UPDATE");
    else c.next();
  }
  if (!table || !beforeInsert) return false;
  let found = false;
  for (let k = c.i; k + 4 < c.end; k++) {
    const t = c.tokens[k]!;
    if (t.upper !== "NEW" || c.tokens[k + 1]!.value !== ".") continue;
    const column = c.tokens[k + 2]!;
    const rhs = c.tokens.slice(k + 3, k + 8).map((x) => x.upper || x.value);
    const assigns = rhs[0] === "=" || (rhs[0] === ":" && rhs[1] === "=");
    if (assigns && (rhs.includes("GEN_ID") || (rhs.includes("NEXT") && rhs.includes("VALUE")))) {
      ctx.builder.autoIncrementHints.push({ table, column: column.value });
      found = true;
    }
  }
  c.drain();
  return found;
}
