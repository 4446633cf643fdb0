/**
 * Stand-alone parsing (spec `POST /sql-parse`, `GET /sql-parse/{id}/schema`): SQL parsed
 * outside any project, for previews and imports. The parse is kept for its author for
 * seven days (cleaned up by the maintenance job), then it is gone; of one author's parses
 * only the newest KEPT_PARSES are kept, so the 5 MB texts one may send a thousand times an
 * hour do not pile up for a week. A parse is held for the request that made it until that
 * request has read it (`held_until`), so a burst of more than KEPT_PARSES at once answers
 * every one of them; the older ones go with a later parse.
 */
import { z } from "zod";
import { ignoredRow, sql } from "../../../shared/db/pool.ts";
import { notFound } from "../../../shared/errors.ts";
import { enqueue } from "../../../shared/jobs/enqueue.ts";
import { schemasParse } from "../../../shared/jobs/kinds.ts";
import { presentTables, tableResource } from "../../../shared/schemas/present.ts";
import { parseWarningSchema } from "../../../shared/schemas/store.ts";
import { dialectSchema, parsedSchemaSchema } from "../../../shared/sqlddl/index.ts";
import { currentUser } from "../../context.ts";
import { acceptedResponse, prefersAsync, respondWithJob } from "../../jobResponse.ts";
import { defineRoute } from "../route.ts";
import type { DatabasePool } from "../../../shared/db/pool.ts";
import { checkSqlSize, sqlBodyLimit, sqlParseBody } from "./schemas.schema.ts";

/** Parses kept per user: a new one drops the oldest beyond this many. */
export const KEPT_PARSES = 20;

const parseResource = z.object({
  id: z.number(),
  database_type: z.string(),
  tables_count: z.number(),
  tables: z.array(tableResource),
  warnings: z.array(parseWarningSchema),
  created_at: z.string(),
  expires_at: z.string(),
});

const parseRow = z.object({
  id: z.number(),
  database_type: dialectSchema,
  parsed: parsedSchemaSchema,
  warnings: z.array(parseWarningSchema),
  created_at: z.date(),
  expires_at: z.date(),
});

/** How long past SYNC_WAIT_MS a parse stays held for a request that never read it (its web process stopped). */
const HOLD_GRACE_S = 60;

/**
 * Reads a parse of `userId`; `release` also ends the hold of the request that made it
 * (that request's read, in the same statement).
 */
async function loadParse(pool: DatabasePool, id: number, userId: number, release = false) {
  const row = release
    ? await pool.maybeOne(sql.type(parseRow)`
        update sql_parses set held_until = null
        where id = ${id} and user_id = ${userId} and parsed is not null and expires_at > now()
        returning id, database_type, parsed, warnings, created_at, expires_at`)
    : await pool.maybeOne(sql.type(parseRow)`
        select id, database_type, parsed, warnings, created_at, expires_at from sql_parses
        where id = ${id} and user_id = ${userId} and parsed is not null and expires_at > now()`);
  if (!row) throw notFound("Parsed schema");
  return {
    id: row.id,
    database_type: row.database_type,
    tables_count: row.parsed.tables.length,
    tables: presentTables(row.parsed, null),
    warnings: row.warnings,
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
  };
}

const parse = defineRoute({
  method: "post",
  path: "/sql-parse",
  summary: "Parse SQL DDL without storing it in a project",
  description:
    "Answers the parsed tables (ids of tables and fields are null: they get ids when saved as a project schema) and the warnings. " +
    `The parse is kept for 7 days; of a user's parses only the newest ${KEPT_PARSES} are kept.`,
  tags: ["Schemas"],
  auth: "bearer",
  body: sqlParseBody,
  bodyLimitBytes: sqlBodyLimit,
  responses: { 200: { description: "The parsed structure", schema: z.object({ parse: parseResource }) }, ...acceptedResponse },
  handler: async (ctx, { body }) => {
    const user = currentUser(ctx);
    const { pool, config } = ctx.deps;
    checkSqlSize(config, body.sql_text);
    // A request that answers 202 at once never reads its parse: nothing to hold it for.
    const holdSeconds = prefersAsync(ctx) ? null : Math.ceil(config.syncWaitMs / 1000) + HOLD_GRACE_S;
    const { id, job } = await pool.transaction(async (tx) => {
      const id = await tx.oneFirst(sql.type(z.object({ id: z.number() }))`
        insert into sql_parses (user_id, database_type, sql_text, held_until)
        values (${user.id}, ${body.database_type}, ${body.sql_text}, now() + make_interval(secs => ${holdSeconds}::int))
        returning id`);
      // Another request's parse beyond the cap goes only once that request has read it.
      await tx.query(sql.type(ignoredRow)`
        delete from sql_parses where user_id = ${user.id} and (held_until is null or held_until < now())
          and id in (select id from sql_parses where user_id = ${user.id} order by id desc offset ${KEPT_PARSES})`);
      return { id, job: await enqueue(tx, schemasParse, { target: "sql_parse", parse_id: id }, { userId: user.id }) };
    });
    await respondWithJob(ctx, job, async () => {
      ctx.body = { parse: await loadParse(pool, id, user.id, true) };
    });
  },
});

const show = defineRoute({
  method: "get",
  path: "/sql-parse/{id}/schema",
  summary: "A stand-alone parse, while it is kept",
  tags: ["Schemas"],
  auth: "bearer",
  params: z.object({ id: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER) }),
  responses: { 200: { description: "The parsed structure", schema: z.object({ parse: parseResource }) } },
  handler: async (ctx, { params }) => {
    ctx.body = { parse: await loadParse(ctx.deps.pool, params.id, currentUser(ctx).id) };
  },
});

export const sqlParseRoutes = [parse, show];
