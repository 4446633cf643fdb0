/**
 * Large inputs are handled whole: a CREATE TABLE of 30,000 columns, a dump of 3,000 tables
 * and a T-SQL batch of 5,000 statements without GO or semicolons parse completely (the last
 * column, key, comment and foreign key found), and export and compare. How their cost grows
 * with size (linearly: 100 times the input costs less than 1,000 times the time, where a
 * quadratic lookup made it 2,300–14,000 times) is a speed claim, measured by
 * `npm run bench sqlscaling` against the small case of the same run, not decided here.
 */
import t from "tap";
import { diffSchemas, exportSql, parseDdl, type Dialect, type ParsedSchema } from "../../../shared/sqlddl/index.ts";
import { manyTables, tsqlBatch, wideTable } from "../../support/ddlShapes.ts";

const GROWTH = 100;
const parse = (sql: string, dialect: Dialect): ParsedSchema => parseDdl(sql, dialect, { maxMs: 120_000 }).schema;

t.test("a table of 30,000 columns parses, exports and compares whole", async (t) => {
  for (const dialect of ["PostgreSQL", "MySQL"] as const) {
    const parsed = parse(wideTable(300 * GROWTH, dialect), dialect);
    const [table] = parsed.tables;
    t.equal(table?.fields.length, 300 * GROWTH, `${dialect}: every column parsed`);
    t.same(table?.constraints.find((k) => k.type === "primary_key")?.columns, ["Col_0", `Col_${300 * GROWTH - 1}`], `${dialect}: the key found its last column`);
    t.equal(table?.fields.at(-1)?.comment, "last", `${dialect}: the comment found the last column`);
    for (const target of ["PostgreSQL", "MySQL", "SQLite", "MSSQL"] as const) {
      t.match(exportSql(parsed, target), new RegExp(`Col_${300 * GROWTH - 1}`), `${dialect} export to ${target} has the last column`);
    }
    const changed = parse(wideTable(300 * GROWTH, dialect, 3), dialect);
    const diff = diffSchemas(parsed, changed, dialect);
    t.equal(diff.differences.modified_tables.wide?.added_columns.length, 3, `${dialect}: the comparison found the added columns`);
  }
});

t.test("a dump of 3,000 tables parses, exports and compares whole", async (t) => {
  const schema = parse(manyTables(30 * GROWTH), "PostgreSQL");
  t.equal(schema.tables.length, 30 * GROWTH, "every table parsed");
  t.equal(schema.tables.filter((x) => x.constraints.some((k) => k.type === "foreign_key")).length, 30 * GROWTH - 1, "every foreign key found its table");
  for (const target of ["PostgreSQL", "MySQL", "SQLite", "MSSQL"] as const) {
    t.equal(exportSql(schema, target).match(/CREATE TABLE/g)?.length, 30 * GROWTH, `export to ${target}: every table`);
  }
  const changed = parse(manyTables(30 * GROWTH, true), "PostgreSQL");
  const diff = diffSchemas(schema, changed, "PostgreSQL");
  t.equal(diff.differences.removed_tables.length, Math.ceil((30 * GROWTH) / 13), "the comparison found every dropped table");
});

t.test("a T-SQL batch of 5,000 statements without GO or semicolons is 5,000 tables", async (t) => {
  const parsed = parse(tsqlBatch(50 * GROWTH), "MSSQL");
  t.equal(parsed.tables.length, 50 * GROWTH, "every statement of the batch is a table");
  t.same(parsed.tables.at(-1)?.constraints.find((k) => k.type === "primary_key")?.columns, ["id"], "the last one complete");
});
