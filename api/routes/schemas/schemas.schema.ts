/**
 * Request schemas of the schema routes, and the checks they share: dialect names with
 * their aliases, and the size limit of SQL text (a config value, so checked in handlers).
 */
import { z } from "zod";
import type { Config } from "../../../shared/config.ts";
import { invalid } from "../../../shared/errors.ts";
import { sqlSizeProblem } from "../../../shared/schemas/limits.ts";
import { DIALECTS, normalizeDialect, type Dialect } from "../../../shared/sqlddl/index.ts";
import { paginationQuery } from "../../pagination.ts";
import { projectParams } from "../projects/projects.schema.ts";
import { idNumber } from "../../../shared/canonicalNumbers.ts";

const id = z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER);

export const schemaParams = projectParams.extend({ schemaId: id });

export const listSchemasQuery = paginationQuery.extend({ q: z.string().trim().max(255).optional() });

/** A `database_type` as DESIGN §9 names it, or one of its aliases (`mariadb`, `postgres`, `sqlserver`, …). */
export const databaseType = z
  .string({ error: "The database type is required." })
  .trim()
  .transform((value, ctx): Dialect => {
    const dialect = normalizeDialect(value);
    if (dialect === null) {
      ctx.addIssue({ code: "custom", message: `The database type must be one of ${DIALECTS.join(", ")}.` });
      return z.NEVER;
    }
    return dialect;
  });

const name = z.string({ error: "The name is required." }).trim().min(1, { error: "The name is required." }).max(255);
const sqlText = z.string({ error: "The SQL text is required." }).refine((v) => v.trim() !== "", { error: "The SQL text is required." });

export const createSchemaBody = z.object({ name, sql_text: sqlText, database_type: databaseType });

export const updateSchemaBody = z
  .object({ name: name.optional(), sql_text: sqlText.optional(), database_type: databaseType.optional() })
  .refine((v) => Object.keys(v).length > 0, { message: "Send at least one field to change." });

export const sqlParseBody = z.object({ sql_text: sqlText, database_type: databaseType });

export const exportQuery = z.object({
  format: z.enum(["sql", "json"], { error: "The format must be sql or json." }).default("sql"),
  database_type: databaseType.optional(),
});

export const compareBody = z.object({ schema_id_1: idNumber(), schema_id_2: idNumber() });

/** JSON body limit of routes that carry SQL text: the text limit plus room for JSON escaping. */
export const sqlBodyLimit = (config: Config) => Math.ceil(config.schemas.sqlMaxBytes * 1.1) + 64 * 1024;

/** 422 when `sqlText` is over the configured limit. */
export function checkSqlSize(config: Config, sqlText: string | undefined): void {
  const problem = sqlText === undefined ? null : sqlSizeProblem(config, sqlText);
  if (problem !== null) throw invalid({ sql_text: [problem] });
}
