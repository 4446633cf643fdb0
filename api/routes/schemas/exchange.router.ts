/**
 * Schemas out of the service: export as SQL of any of the five dialects or as JSON (a
 * download), and comparison of two schemas with the migration SQL that turns the first
 * into the second in the second's dialect. The SQL export and the comparison run on the
 * parse threads within SCHEMA_PARSE_TIMEOUT_MS (shared/schemas/parsePool.ts): for a schema
 * of thousands of tables they take hundreds of milliseconds, which would stall every other
 * request of this process.
 */
import { z } from "zod";
import { AppError, invalid, notFound, type FieldErrors } from "../../../shared/errors.ts";
import { compareOffThread, exportOffThread, SchemaWorkTimeout } from "../../../shared/schemas/parsePool.ts";
import { findStoredParse } from "../../../shared/schemas/store.ts";
import { parsedConstraintSchema } from "../../../shared/sqlddl/index.ts";
import { currentUser } from "../../context.ts";
import { projectForRead } from "../../policies/projectGuard.ts";
import { defineRoute } from "../route.ts";
import { downloadName } from "../projects/bundle.router.ts";
import { projectParams } from "../projects/projects.schema.ts";
import { loadSchemaResource } from "./schemas.router.ts";
import { compareBody, exportQuery, schemaParams } from "./schemas.schema.ts";

/** The export or comparison, or 503 when it outlived the time limit (its thread was stopped). */
async function offThread<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof SchemaWorkTimeout) throw new AppError(503, "timeout", `${error.message}; try again later.`);
    throw error;
  }
}

const fileExtension = { MySQL: "mysql.sql", PostgreSQL: "pgsql.sql", SQLite: "sqlite.sql", MSSQL: "mssql.sql", Firebird: "firebird.sql" } as const;

const exportRoute = defineRoute({
  method: "get",
  path: "/projects/{projectId}/schemas/{schemaId}/export",
  summary: "Download a schema as SQL DDL (in its own or another dialect) or as JSON",
  description:
    "`format=sql` (default) writes DDL that the target engine accepts and that recreates the parsed structure; " +
    "`database_type` picks another dialect. `format=json` is the single-read response body.",
  tags: ["Schemas"],
  auth: "bearer",
  params: schemaParams,
  query: exportQuery,
  responses: { 200: { description: "The file (application/sql or application/json) as an attachment" } },
  handler: async (ctx, { params, query }) => {
    const { pool } = ctx.deps;
    const project = await projectForRead(pool, params.projectId, currentUser(ctx));
    if (query.format === "json") {
      const schema = await loadSchemaResource(pool, project.id, params.schemaId);
      ctx.set("Content-Disposition", `attachment; filename="${downloadName(schema.name, "json")}"`);
      ctx.type = "application/json";
      ctx.body = JSON.stringify({ schema }, null, 2);
      return;
    }
    const schema = await findStoredParse(pool, project.id, params.schemaId);
    if (!schema) throw notFound("Schema");
    const dialect = query.database_type ?? schema.database_type;
    const text = await offThread(exportOffThread(schema.parsed_json, dialect, ctx.deps.config.schemas.parseTimeoutMs));
    ctx.set("Content-Disposition", `attachment; filename="${downloadName(schema.name, fileExtension[dialect])}"`);
    ctx.type = "application/sql; charset=utf-8";
    ctx.body = text;
  },
});

const compare = defineRoute({
  method: "post",
  path: "/projects/{projectId}/schemas/compare",
  summary: "Compare two schemas of the project and write the migration from the first to the second",
  description:
    "`differences` lists added and removed tables and, per modified table, added, removed and modified columns and constraint changes. " +
    "`migration_sql` turns schema 1 into schema 2 in the dialect of schema 2 (SQLite rebuilds tables where ALTER TABLE cannot), " +
    "ordered so that foreign keys never point at a missing table or column midway.",
  tags: ["Schemas"],
  auth: "bearer",
  scope: "read", // computes a diff; writes nothing
  params: projectParams,
  body: compareBody,
  responses: {
    200: {
      description: "The differences and the migration",
      schema: z.object({
        differences: z.object({
          added_tables: z.array(z.string()),
          removed_tables: z.array(z.string()),
          modified_tables: z.record(
            z.string(),
            z.object({
              added_columns: z.array(z.string()),
              removed_columns: z.array(z.string()),
              modified_columns: z.array(z.object({ name: z.string(), changes: z.record(z.string(), z.object({ from: z.unknown(), to: z.unknown() })) })),
              added_constraints: z.array(parsedConstraintSchema),
              removed_constraints: z.array(parsedConstraintSchema),
            }),
          ),
        }),
        migration_sql: z.string(),
        database_type: z.string(),
      }),
    },
  },
  handler: async (ctx, { params, body }) => {
    const { pool } = ctx.deps;
    const project = await projectForRead(pool, params.projectId, currentUser(ctx));
    const [from, to] = await Promise.all([findStoredParse(pool, project.id, body.schema_id_1), findStoredParse(pool, project.id, body.schema_id_2)]);
    const errors: FieldErrors = {};
    if (!from) errors.schema_id_1 = ["No schema of this project has this id."];
    if (!to) errors.schema_id_2 = ["No schema of this project has this id."];
    if (!from || !to) throw invalid(errors);
    const diff = await offThread(compareOffThread(from.parsed_json, to.parsed_json, to.database_type, ctx.deps.config.schemas.parseTimeoutMs));
    ctx.body = JSON.parse(diff) as unknown; // small beside the schemas: the names of what changed and the SQL text
  },
});

export const schemaExchangeRoutes = [exportRoute, compare];
