/**
 * Parses SQL text with shared/sqlddl. A schema revision that parses is applied to its
 * schema (records `DatabaseParsed`); one that does not is dropped, and with it a schema
 * that never parsed, so bad input leaves nothing behind. The job then fails with 422 and
 * the first problem's line and column, which the awaiting request answers with.
 *
 * A revision is applied only while the project accepts changes; one that finds the project
 * locked (423), its subscription expired (402), archived (409) or deleted (404) is dropped
 * like one that does not parse, and the job fails with that status.
 *
 * Idempotent: a retry after the revision was applied finds no revision and reports the
 * schema as it is.
 */
import { z } from "zod";
import { ignoredRow, sql, type DatabasePool } from "../../shared/db/pool.ts";
import { AppError } from "../../shared/errors.ts";
import { schemasParse } from "../../shared/jobs/kinds.ts";
import { applyRevision, discardRevision, revisionRow } from "../../shared/schemas/store.ts";
import { parseOffThread, parsePool, parseProblem } from "../../shared/schemas/parsePool.ts";
import { DdlParseError, dialectSchema, type Dialect, type ParseResult } from "../../shared/sqlddl/index.ts";
import { defineTask } from "../defineTask.ts";

// Start a parse thread when the worker loads its tasks, not on the first request.
parsePool.warm();

/**
 * Parses on a parse thread (so the heartbeat and the other jobs of this process keep
 * running; see shared/schemas/parsePool.ts), turning the parser's one error into the 422
 * the endpoint answers with.
 */
async function parseOrReject(sqlText: string, dialect: Dialect, maxMs: number): Promise<ParseResult | AppError> {
  try {
    return await parseOffThread(sqlText, dialect, maxMs);
  } catch (error) {
    if (!(error instanceof DdlParseError)) throw error;
    return new AppError(422, "sql_parse_failed", `The SQL could not be parsed as ${dialect}: ${error.message}.`, {
      sql_text: [parseProblem(error)],
    });
  }
}

async function parseRevision(pool: DatabasePool, schemaId: number, revisionId: number, maxMs: number) {
  const revision = await pool.maybeOne(sql.type(revisionRow)`
    select id, schema_id, user_id, name, database_type, sql_text from schema_revisions where id = ${revisionId}`);
  if (!revision) {
    // An earlier attempt committed its outcome before the worker stopped: report it again.
    const schema = await pool.maybeOne(sql.type(z.object({ tables_count: z.number(), warnings: z.array(z.unknown()) }))`
      select tables_count, warnings from schemas where id = ${schemaId} and status = 'ready' and revision >= ${revisionId}`);
    if (!schema) throw new AppError(422, "sql_parse_discarded", "This schema change did not parse and was discarded.");
    return { schema_id: schemaId, tables_count: schema.tables_count, warnings_count: schema.warnings.length, applied: true };
  }
  const outcome = await parseOrReject(revision.sql_text, revision.database_type, maxMs);
  if (outcome instanceof AppError) {
    await pool.transaction((tx) => discardRevision(tx, revision));
    throw outcome;
  }
  const applied = await pool.transaction((tx) => applyRevision(tx, revision, outcome.schema, outcome.warnings));
  // The project stopped accepting changes after the request: the revision is dropped, and the awaiting request answers as the route would.
  if (applied instanceof AppError) throw applied;
  return {
    schema_id: revision.schema_id,
    tables_count: outcome.schema.tables.length,
    warnings_count: outcome.warnings.length,
    statements: outcome.statements,
    applied,
  };
}

export default defineTask(schemasParse, async (payload, { deps }) => {
  const maxMs = deps.config.schemas.parseTimeoutMs;
  if (payload.target === "schema") return parseRevision(deps.pool, payload.schema_id, payload.revision_id, maxMs);

  const parse = await deps.pool.maybeOne(sql.type(z.object({ id: z.number(), database_type: dialectSchema, sql_text: z.string(), parsed: z.unknown() }))`
    select id, database_type, sql_text, parsed from sql_parses where id = ${payload.parse_id}`);
  if (!parse) throw new AppError(404, "not_found", "The parse request is gone (it expired or was never stored).");
  if (parse.parsed !== null) return { parse_id: parse.id };
  const outcome = await parseOrReject(parse.sql_text, parse.database_type, maxMs);
  if (outcome instanceof AppError) {
    await deps.pool.query(sql.type(ignoredRow)`delete from sql_parses where id = ${parse.id}`);
    throw outcome;
  }
  // Once parsed, the text is not needed: it is emptied, and only the parse is kept.
  await deps.pool.query(sql.type(ignoredRow)`
    update sql_parses set parsed = ${sql.jsonb(outcome.schema as never)}, warnings = ${sql.jsonb(outcome.warnings as never)}, sql_text = ''
    where id = ${parse.id}`);
  return { parse_id: parse.id, tables_count: outcome.schema.tables.length, warnings_count: outcome.warnings.length };
});
