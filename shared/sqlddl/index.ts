/**
 * The SQL DDL engine: parse what a database's own dump tool prints into the schema model,
 * export the model as DDL of any of the five dialects (or JSON), and compare two models
 * into differences plus the migration SQL that turns one into the other.
 */
export { parseDdl, type ParseOptions } from "./parser.ts";
export { DdlParseError } from "./errors.ts";
export { normalizeDialect } from "./dialect.ts";
export * from "./types.ts";
export { exportJson, exportSql } from "./export/exportSql.ts";
export { diffSchemas, type SchemaDiff, type TableChanges, type ColumnChange } from "./diff/diffSchemas.ts";
