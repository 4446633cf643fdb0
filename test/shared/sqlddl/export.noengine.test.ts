/**
 * Exports into MS-SQL and Firebird, which have no engine on these machines. What can be
 * checked without one (CLEARLY A WEAKER CHECK than the engine-judged exports): every corpus
 * schema exports, the export reads back through the parser without a statement it cannot
 * understand, and tables, columns, nullability and keys survive. Also: the JSON export of
 * every parsed corpus file validates against the stored shape (zod) and reads back equal.
 */
import t from "tap";
import { exportJson, exportSql, parseDdl, parsedSchemaSchema, type Dialect } from "../../../shared/sqlddl/index.ts";
import { corpusFiles, noCorpus } from "./support/corpus.ts";
import { compareStructure } from "./support/structure.ts";
import { mysqlSchemaSql } from "./fixtures/mysqlSchema.ts";
import { pgSchemaSql } from "./fixtures/pgSchema.ts";
import { sqliteSchemaSql } from "./fixtures/sqliteSchema.ts";

const DIALECTS: Dialect[] = ["PostgreSQL", "MySQL", "SQLite", "MSSQL", "Firebird"];
const sources = [
  ...DIALECTS.flatMap((d) => corpusFiles(d) ?? []),
  { name: "PostgreSQL test schema", dialect: "PostgreSQL" as Dialect, text: pgSchemaSql },
  { name: "MySQL test schema", dialect: "MySQL" as Dialect, text: mysqlSchemaSql },
  { name: "SQLite test schema", dialect: "SQLite" as Dialect, text: sqliteSchemaSql },
];

t.test("exports into MS-SQL and Firebird read back with the same structure (no engine: parser only)", async (t) => {
  if (!corpusFiles("MSSQL")) t.comment(noCorpus);
  for (const source of sources) {
    const parsed = parseDdl(source.text, source.dialect).schema;
    for (const target of ["MSSQL", "Firebird"] as Dialect[]) {
      const sql = exportSql(parsed, target);
      const back = parseDdl(sql, target);
      const what = `${source.name} → ${target}`;
      t.same(back.warnings.filter((w) => !w.message.startsWith("skipped")), [], `${what}: every statement reads back`);
      t.same(compareStructure(parsed, back.schema), [], `${what}: tables, columns, nullability and keys survive`);
    }
  }
});

t.test("JSON export validates against the stored shape and reads back equal", async (t) => {
  for (const source of sources) {
    const parsed = parseDdl(source.text, source.dialect).schema;
    const text = exportJson(parsed);
    const back = parsedSchemaSchema.safeParse(JSON.parse(text));
    t.ok(back.success, `${source.name}: valid`);
    t.same(back.data, JSON.parse(JSON.stringify(parsed)), `${source.name}: equal after the round trip`);
  }
});
