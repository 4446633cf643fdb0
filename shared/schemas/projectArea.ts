/**
 * Schemas as a part of a project: the `schemas_count` of the project resource and the
 * `schemas` section of project bundles (name, dialect, SQL text and label translations;
 * the SQL is parsed again on import, so a bundle cannot smuggle in a parse the parser
 * would not produce).
 *
 * The parse happens in `prepare`, which validate and import both run: each text within
 * SCHEMA_SQL_MAX_BYTES, all of a bundle's texts within SCHEMA_PARSE_TIMEOUT_MS together
 * (as much as one schema may take), on parse threads so the web process keeps serving.
 */
import { z } from "zod";
import { ignoredRow, sql } from "../db/pool.ts";
import { registerProjectCounter } from "../db/projects.ts";
import { dict } from "../dict.ts";
import { AppError } from "../errors.ts";
import { registerBundleSection, type PrepareContext, type Prepared } from "../projects/bundle.ts";
import { DdlParseError, dialectSchema, type ParseResult } from "../sqlddl/index.ts";
import { labelKey } from "./labelTables.ts";
import { sqlSizeProblem } from "./limits.ts";
import { parseOffThread, parseProblem } from "./parsePool.ts";
import { applyRevision, insertSchema } from "./store.ts";

registerProjectCounter("schemas_count", sql.fragment`(select count(*)::int from schemas s where s.project_id = p.id and s.status = 'ready')`);

const translation = z.object({
  language: z.string().regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$/),
  table_name: z.string().min(1).max(255),
  field_name: z.string().min(1).max(255).nullable(),
  label: z.string().min(1).max(500),
  description: z.string().max(5000).default(""),
});

const bundledSchema = z.object({
  id: z.number().int(),
  name: z.string().trim().min(1).max(255),
  database_type: dialectSchema,
  sql_text: z.string().min(1),
  translations: z.array(translation).max(100_000).default([]),
});

const section = z.array(bundledSchema).max(1000);
type Section = z.infer<typeof section>;

/** A bundled schema with its parse, as import receives it. */
type ParsedItem = Section[number] & { parse: ParseResult };

/** Problems reported at most per bundle (a broken bundle may hold a thousand schemas). */
const maxProblems = 50;

/** Checks every text's size, then parses them in order within one time budget. */
async function prepareSchemas(data: Section, { config }: PrepareContext): Promise<Prepared<ParsedItem[]>> {
  const errors = dict<string[]>();
  const field = (index: number) => `${index}.sql_text`;
  for (const [index, item] of data.entries()) {
    const problem = sqlSizeProblem(config, item.sql_text);
    if (problem !== null) errors[field(index)] = [problem];
  }
  if (Object.keys(errors).length) return { errors };
  const budgetMs = config.schemas.parseTimeoutMs;
  const deadline = Date.now() + budgetMs;
  const parsed: ParsedItem[] = [];
  for (const [index, item] of data.entries()) {
    const leftMs = deadline - Date.now();
    if (leftMs <= 0) {
      errors[field(index)] = [`Not parsed: parsing the bundle's SQL took longer than the limit of ${budgetMs / 1000} s for all its schemas together.`];
      break;
    }
    try {
      parsed.push({ ...item, parse: await parseOffThread(item.sql_text, item.database_type, leftMs) });
    } catch (error) {
      if (!(error instanceof DdlParseError)) throw error;
      errors[field(index)] = [parseProblem(error)];
      if (Object.keys(errors).length >= maxProblems) break;
    }
  }
  return Object.keys(errors).length ? { errors } : { data: parsed };
}

registerBundleSection<Section, ParsedItem[]>({
  name: "schemas",
  schema: section,
  prepare: prepareSchemas,
  count: (data) => data.length,
  async export(conn, projectId) {
    const schemas = await conn.any(sql.type(bundledSchema.omit({ translations: true }))`
      select id, name, database_type, sql_text from schemas where project_id = ${projectId} and status = 'ready' order by id`);
    const translations = await conn.any(sql.type(translation.extend({ schema_id: z.number() }))`
      select t.schema_id, t.language, t.table_name, t.field_name, t.label, t.description
      from schema_translations t join schemas s on s.id = t.schema_id
      where s.project_id = ${projectId} and s.status = 'ready' order by t.id`);
    return schemas.map((s) => ({
      ...s,
      translations: translations.filter((t) => t.schema_id === s.id).map(({ schema_id: _, ...t }) => t),
    }));
  },
  async import(tx, data, ctx) {
    const ids = new Map<number, number>();
    ctx.ids.set("schemas", ids);
    for (const item of data) {
      const { schemaId, revisionId } = await insertSchema(tx, {
        projectId: ctx.projectId,
        userId: ctx.userId,
        name: item.name,
        databaseType: item.database_type,
        sqlText: item.sql_text,
      });
      const applied = await applyRevision(
        tx,
        { id: revisionId, schema_id: schemaId, user_id: ctx.userId, name: item.name, database_type: item.database_type, sql_text: item.sql_text },
        item.parse.schema,
        item.parse.warnings,
      );
      if (applied instanceof AppError) throw applied; // the new project is writable; kept for the type
      ids.set(item.id, schemaId);
      for (const t of item.translations) {
        // A bundle exported before labels were keyed by qualified name may name a table bare.
        const tableName = labelKey(item.parse.schema, t.table_name) ?? t.table_name;
        await tx.query(sql.type(ignoredRow)`
          insert into schema_translations (schema_id, language, table_name, field_name, label, description)
          values (${schemaId}, ${t.language}, ${tableName}, ${t.field_name}, ${t.label}, ${t.description})
          on conflict do nothing`);
      }
    }
  },
});
