/**
 * Schemas of a project: list, read, create, update, delete. Creating or changing the SQL
 * text runs the `schemas__parse` job, awaited (DESIGN §4): the answer carries the parsed
 * schema, or 422 naming the line and column of the first problem, or 202 with the job.
 * A change is applied only when it parses, so a failed update leaves the schema as it was.
 */
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods } from "../../../shared/db/pool.ts";
import { notFound } from "../../../shared/errors.ts";
import { enqueue } from "../../../shared/jobs/enqueue.ts";
import { schemasParse } from "../../../shared/jobs/kinds.ts";
import { presentSchema, presentSchemaSummary, schemaResource, schemaSummary } from "../../../shared/schemas/present.ts";
import { findReadySchema, insertRevision, insertSchema, loadAnchors, schemaRow } from "../../../shared/schemas/store.ts";
import { currentUser } from "../../context.ts";
import { acceptedResponse, respondWithJob } from "../../jobResponse.ts";
import { paginated, paginatedSchema, pageFragment } from "../../pagination.ts";
import { projectForRead, projectForWrite } from "../../policies/projectGuard.ts";
import { messageResponse } from "../auth/auth.schema.ts";
import { defineRoute } from "../route.ts";
import { projectParams } from "../projects/projects.schema.ts";
import { checkSqlSize, createSchemaBody, listSchemasQuery, schemaParams, sqlBodyLimit, updateSchemaBody } from "./schemas.schema.ts";
import { projectStateResponses } from "../projectStates.ts";

const schemaEnvelope = z.object({ message: z.string(), schema: schemaResource });

/** The presented single read of a ready schema; 404 when it is not one. */
export async function loadSchemaResource(conn: CommonQueryMethods, projectId: number, schemaId: number) {
  const row = await findReadySchema(conn, projectId, schemaId);
  if (!row) throw notFound("Schema");
  return presentSchema(row, await loadAnchors(conn, row.id));
}

const list = defineRoute({
  method: "get",
  path: "/projects/{projectId}/schemas",
  summary: "The parsed schemas of a project",
  tags: ["Schemas"],
  auth: "bearer",
  params: projectParams,
  query: listSchemasQuery,
  responses: { 200: { description: "A page of schemas", schema: paginatedSchema(schemaSummary) } },
  handler: async (ctx, { params, query }) => {
    const { pool } = ctx.deps;
    const project = await projectForRead(pool, params.projectId, currentUser(ctx));
    const filters = [sql.fragment`project_id = ${project.id}`, sql.fragment`status = 'ready'`];
    if (query.q) filters.push(sql.fragment`name ilike ${`%${query.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`}`);
    const where = sql.join(filters, sql.fragment` and `);
    const [rows, total] = await Promise.all([
      pool.any(sql.type(schemaRow.pick({ id: true, name: true, database_type: true, tables_count: true, created_at: true, updated_at: true }))`
        select id, name, database_type, tables_count, created_at, updated_at from schemas where ${where}
        order by created_at desc, id desc ${pageFragment(query)}`),
      pool.oneFirst(sql.type(z.object({ count: z.number() }))`select count(*)::int as count from schemas where ${where}`),
    ]);
    ctx.body = paginated(rows.map(presentSchemaSummary), total, query, new URL(ctx.href));
  },
});

const show = defineRoute({
  method: "get",
  path: "/projects/{projectId}/schemas/{schemaId}",
  summary: "A schema with its tables, fields and constraints",
  tags: ["Schemas"],
  auth: "bearer",
  params: schemaParams,
  responses: { 200: { description: "The schema", schema: z.object({ schema: schemaResource }) } },
  handler: async (ctx, { params }) => {
    const project = await projectForRead(ctx.deps.pool, params.projectId, currentUser(ctx));
    ctx.body = { schema: await loadSchemaResource(ctx.deps.pool, project.id, params.schemaId) };
  },
});

const create = defineRoute({
  method: "post",
  path: "/projects/{projectId}/schemas",
  summary: "Parse SQL DDL into a new schema of the project",
  description:
    "The SQL is parsed by a background job that this request awaits. Statements the parser does not model are skipped and listed in `warnings`; " +
    "when nothing could be understood the answer is 422 with the line and column of the first problem.",
  tags: ["Schemas"],
  auth: "bearer",
  params: projectParams,
  body: createSchemaBody,
  bodyLimitBytes: sqlBodyLimit,
  responses: { ...projectStateResponses, 201: { description: "Parsed and created", schema: schemaEnvelope }, ...acceptedResponse },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const { pool, config } = ctx.deps;
    checkSqlSize(config, body.sql_text);
    const { schemaId, job } = await pool.transaction(async (tx) => {
      const project = await projectForWrite(tx, params.projectId, user, "content");
      const ids = await insertSchema(tx, { projectId: project.id, userId: user.id, name: body.name, databaseType: body.database_type, sqlText: body.sql_text });
      const job = await enqueue(tx, schemasParse, { target: "schema", schema_id: ids.schemaId, revision_id: ids.revisionId }, { userId: user.id, projectId: project.id });
      return { schemaId: ids.schemaId, job };
    });
    await respondWithJob(ctx, job, async () => {
      ctx.status = 201;
      ctx.body = { message: "Schema created.", schema: await loadSchemaResource(pool, params.projectId, schemaId) };
    });
  },
});

const update = defineRoute({
  method: "put",
  path: "/projects/{projectId}/schemas/{schemaId}",
  summary: "Rename a schema, or replace its SQL (parsed again; applied only when it parses)",
  tags: ["Schemas"],
  auth: "bearer",
  params: schemaParams,
  body: updateSchemaBody,
  bodyLimitBytes: sqlBodyLimit,
  responses: { ...projectStateResponses, 200: { description: "Updated", schema: schemaEnvelope }, ...acceptedResponse },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const { pool, config } = ctx.deps;
    checkSqlSize(config, body.sql_text);
    const job = await pool.transaction(async (tx) => {
      const project = await projectForWrite(tx, params.projectId, user, "content");
      const schema = await findReadySchema(tx, project.id, params.schemaId, true);
      if (!schema) throw notFound("Schema");
      const reparse = (body.sql_text !== undefined && body.sql_text !== schema.sql_text) || (body.database_type !== undefined && body.database_type !== schema.database_type);
      if (!reparse) {
        if (body.name !== undefined) {
          await tx.query(sql.type(ignoredRow)`update schemas set name = ${body.name}, updated_at = now() where id = ${schema.id}`);
          // A text still waiting for its parse carries the name of its request: the later rename wins when it applies.
          await tx.query(sql.type(ignoredRow)`update schema_revisions set name = ${body.name} where schema_id = ${schema.id}`);
        }
        return null;
      }
      const revisionId = await insertRevision(tx, {
        schemaId: schema.id,
        userId: user.id,
        name: body.name ?? schema.name,
        databaseType: body.database_type ?? schema.database_type,
        sqlText: body.sql_text ?? schema.sql_text,
      });
      return enqueue(tx, schemasParse, { target: "schema", schema_id: schema.id, revision_id: revisionId }, { userId: user.id, projectId: project.id });
    });
    const answer = async () => {
      ctx.body = { message: "Schema updated.", schema: await loadSchemaResource(pool, params.projectId, params.schemaId) };
    };
    if (job === null) return answer();
    await respondWithJob(ctx, job, answer);
  },
});

const remove = defineRoute({
  method: "delete",
  path: "/projects/{projectId}/schemas/{schemaId}",
  summary: "Delete a schema (code generations made from it keep their files)",
  tags: ["Schemas"],
  auth: "bearer",
  params: schemaParams,
  responses: { ...projectStateResponses, 200: { description: "Deleted", schema: messageResponse } },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    await ctx.deps.pool.transaction(async (tx) => {
      const project = await projectForWrite(tx, params.projectId, user, "content");
      const deleted = await tx.maybeOne(sql.type(z.object({ id: z.number() }))`
        delete from schemas where id = ${params.schemaId} and project_id = ${project.id} and status = 'ready' returning id`);
      if (!deleted) throw notFound("Schema");
    });
    ctx.body = { message: "Schema deleted." };
  },
});

export const schemaRoutes = [list, create, show, update, remove];
