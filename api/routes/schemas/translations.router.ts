/**
 * Translations of schema labels (DESIGN §11): per schema and language, a label (and an
 * optional description) for each table and field, keyed by name so they survive
 * re-parses; exported per project as JSON (nested, ready for i18n files) or CSV. Schema
 * names need not be unique in a project: the export keys each schema by its name, and two
 * schemas of one name by `name (#id)` each, so their labels never merge.
 */
import { stringify } from "csv-stringify/sync";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { dict } from "../../../shared/dict.ts";
import { invalid, notFound } from "../../../shared/errors.ts";
import { tablesNamed } from "../../../shared/schemas/labelTables.ts";
import { findReadySchema, qualifiedName, type ReadySchema } from "../../../shared/schemas/store.ts";
import { currentUser } from "../../context.ts";
import { projectForRead, projectForWrite } from "../../policies/projectGuard.ts";
import { messageResponse } from "../auth/auth.schema.ts";
import { defineRoute } from "../route.ts";
import { downloadName } from "../projects/bundle.router.ts";
import { projectParams } from "../projects/projects.schema.ts";
import { schemaParams } from "./schemas.schema.ts";
import { projectStateResponses } from "../projectStates.ts";

const language = z
  .string({ error: "The language is required." })
  .trim()
  .regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$/, { error: "The language must be a language code such as en, de or pt-BR." });
const label = z.string({ error: "The label is required." }).trim().min(1, { error: "The label is required." }).max(500);
const description = z.string().max(5000);

const translationRow = z.object({
  id: z.number(),
  schema_id: z.number(),
  language: z.string(),
  table_name: z.string(),
  field_name: z.string().nullable(),
  label: z.string(),
  description: z.string(),
  created_at: z.date(),
  updated_at: z.date(),
});
type TranslationRow = z.infer<typeof translationRow>;

const translationResource = z.object({
  id: z.number(),
  schema_id: z.number(),
  language: z.string(),
  table_name: z.string(),
  field_name: z.string().nullable(),
  label: z.string(),
  description: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});

const present = (row: TranslationRow) => ({ ...row, created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString() });

const translationParams = schemaParams.extend({ translationId: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER) });

/**
 * The key of the table a label is for: its qualified name (`public.users`), which the
 * automatic translation and the export use too, whether the request named it so or bare
 * (`users`, when only one table has that name). 422 unless the table (and field) exist in
 * the schema's current parse.
 */
function targetTable(schema: ReadySchema, tableName: string, fieldName: string | null): string {
  const matches = tablesNamed(schema.parsed, tableName);
  const names = [...new Set(matches.map(qualifiedName))].sort();
  if (names.length === 0) throw invalid({ table_name: [`The schema has no table named ${tableName}.`] });
  if (names.length > 1) throw invalid({ table_name: [`Several tables are named ${tableName}; name one with its schema: ${names.join(", ")}.`] });
  if (fieldName !== null && !matches.some((t) => t.fields.some((f) => f.field_name === fieldName))) {
    throw invalid({ field_name: [`The table ${tableName} has no field named ${fieldName}.`] });
  }
  return names[0]!;
}

const list = defineRoute({
  method: "get",
  path: "/projects/{projectId}/schemas/{schemaId}/translations",
  summary: "Label translations of a schema, optionally of one language",
  tags: ["Schemas"],
  auth: "bearer",
  params: schemaParams,
  query: z.object({ language: language.optional() }),
  responses: { 200: { description: "The translations", schema: z.object({ data: z.array(translationResource) }) } },
  handler: async (ctx, { params, query }) => {
    const { pool } = ctx.deps;
    const project = await projectForRead(pool, params.projectId, currentUser(ctx));
    const schema = await findReadySchema(pool, project.id, params.schemaId);
    if (!schema) throw notFound("Schema");
    const rows = await pool.any(sql.type(translationRow)`
      select * from schema_translations where schema_id = ${schema.id}
      ${query.language ? sql.fragment`and language = ${query.language}` : sql.fragment``}
      order by language, table_name, field_name nulls first`);
    ctx.body = { data: rows.map(present) };
  },
});

const add = defineRoute({
  method: "post",
  path: "/projects/{projectId}/schemas/{schemaId}/translations",
  summary: "Add the label of a table (no field_name) or of a field in one language",
  tags: ["Schemas"],
  auth: "bearer",
  params: schemaParams,
  body: z.object({
    language,
    table_name: z.string({ error: "The table name is required." }).min(1).max(255),
    field_name: z.string().min(1).max(255).nullable().optional(),
    label,
    description: description.optional(),
  }),
  responses: { ...projectStateResponses, 201: { description: "Added", schema: z.object({ message: z.string(), translation: translationResource }) } },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const row = await ctx.deps.pool.transaction(async (tx) => {
      const project = await projectForWrite(tx, params.projectId, user, "content");
      const schema = await findReadySchema(tx, project.id, params.schemaId);
      if (!schema) throw notFound("Schema");
      const fieldName = body.field_name ?? null;
      const tableName = targetTable(schema, body.table_name, fieldName);
      const inserted = await tx.maybeOne(sql.type(translationRow)`
        insert into schema_translations (schema_id, language, table_name, field_name, label, description)
        values (${schema.id}, ${body.language}, ${tableName}, ${fieldName}, ${body.label}, ${body.description ?? ""})
        on conflict do nothing returning *`);
      if (!inserted) {
        throw invalid({ language: [`A ${body.language} label for ${fieldName === null ? tableName : `${tableName}.${fieldName}`} exists already; update it instead.`] });
      }
      return inserted;
    });
    ctx.status = 201;
    ctx.body = { message: "Translation added.", translation: present(row) };
  },
});

const update = defineRoute({
  method: "put",
  path: "/projects/{projectId}/schemas/{schemaId}/translations/{translationId}",
  summary: "Change a label translation",
  tags: ["Schemas"],
  auth: "bearer",
  params: translationParams,
  body: z
    .object({ label: label.optional(), description: description.optional() })
    .refine((v) => v.label !== undefined || v.description !== undefined, { message: "Send a label or a description to change." }),
  responses: { ...projectStateResponses, 200: { description: "Updated", schema: z.object({ message: z.string(), translation: translationResource }) } },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const row = await ctx.deps.pool.transaction(async (tx) => {
      const project = await projectForWrite(tx, params.projectId, user, "content");
      const updated = await tx.maybeOne(sql.type(translationRow)`
        update schema_translations t set
          label = coalesce(${body.label ?? null}, t.label),
          description = coalesce(${body.description ?? null}, t.description),
          source = 'human',
          updated_at = now()
        from schemas s
        where t.id = ${params.translationId} and t.schema_id = ${params.schemaId} and s.id = t.schema_id and s.project_id = ${project.id}
        returning t.*`);
      if (!updated) throw notFound("Translation");
      return updated;
    });
    ctx.body = { message: "Translation updated.", translation: present(row) };
  },
});

const remove = defineRoute({
  method: "delete",
  path: "/projects/{projectId}/schemas/{schemaId}/translations/{translationId}",
  summary: "Delete a label translation",
  tags: ["Schemas"],
  auth: "bearer",
  params: translationParams,
  responses: { ...projectStateResponses, 200: { description: "Deleted", schema: messageResponse } },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    await ctx.deps.pool.transaction(async (tx) => {
      const project = await projectForWrite(tx, params.projectId, user, "content");
      const deleted = await tx.maybeOne(sql.type(z.object({ id: z.number() }))`
        delete from schema_translations t using schemas s
        where t.id = ${params.translationId} and t.schema_id = ${params.schemaId} and s.id = t.schema_id and s.project_id = ${project.id}
        returning t.id`);
      if (!deleted) throw notFound("Translation");
    });
    ctx.body = { message: "Translation deleted." };
  },
});

const exportRow = translationRow.pick({ language: true, table_name: true, field_name: true, label: true, description: true }).extend({ schema_key: z.string() });
type ExportRow = z.infer<typeof exportRow>;

interface TableLabels {
  label: string | null;
  description: string;
  fields: Record<string, { label: string; description: string }>;
}

/**
 * language → schema key → table name → labels. A schema's key is its name, or `name (#id)`
 * when another ready schema of the project has that name too (or its name is such a key
 * already), judged over all of the project's ready schemas: a key does not depend on the
 * language exported, and a project whose schema names are unique keeps plain names.
 * Schema, table and field names are the user's (`__proto__`, `constructor`, …), so every
 * level is a prototype-less object: on a plain `{}` a schema named `__proto__` would make
 * the next write land on Object.prototype.
 */
function nested(rows: readonly ExportRow[]) {
  const out = dict<Record<string, Record<string, TableLabels>>>();
  for (const row of rows) {
    const schemas = (out[row.language] ??= dict());
    const tables = (schemas[row.schema_key] ??= dict());
    const table = (tables[row.table_name] ??= { label: null, description: "", fields: dict() });
    if (row.field_name === null) {
      table.label = row.label;
      table.description = row.description;
    } else {
      table.fields[row.field_name] = { label: row.label, description: row.description };
    }
  }
  return out;
}

/** A cell a spreadsheet would run as a formula gets a leading apostrophe (CSV injection). */
const inert = (value: string) => (/^[=+\-@\t\r]/.test(value) ? `'${value}` : value);

const exportRoute = defineRoute({
  method: "get",
  path: "/projects/{projectId}/translations/export",
  summary: "Download every schema label translation of a project as JSON or CSV",
  description:
    "JSON nests language → schema → table → {label, description, fields: {field: {label, description}}}. " +
    "CSV has the columns schema, language, table_name, field_name, label, description. " +
    "A schema is named by its name; when several schemas of the project share a name, each of them is named `name (#id)` instead, in both formats.",
  tags: ["Schemas"],
  auth: "bearer",
  params: projectParams,
  query: z.object({ format: z.enum(["json", "csv"], { error: "The format must be json or csv." }).default("json"), language: language.optional() }),
  responses: { 200: { description: "The file as an attachment" } },
  handler: async (ctx, { params, query }) => {
    const { pool } = ctx.deps;
    const project = await projectForRead(pool, params.projectId, currentUser(ctx));
    // the key of each schema (see the description) over all ready schemas, whichever have labels
    const rows = await pool.any(sql.type(exportRow)`
      with ready as (
        select id, name, count(*) over (partition by name) > 1 as shared from schemas where project_id = ${project.id} and status = 'ready'
      ), keyed as (
        select r.id, r.name,
               case when r.shared or exists (select 1 from ready o where o.shared and o.name || ' (#' || o.id || ')' = r.name)
                    then r.name || ' (#' || r.id || ')' else r.name end as schema_key
        from ready r
      )
      select k.schema_key, t.language, t.table_name, t.field_name, t.label, t.description
      from schema_translations t join keyed k on k.id = t.schema_id
      where true ${query.language ? sql.fragment`and t.language = ${query.language}` : sql.fragment``}
      order by k.name, k.id, t.language, t.table_name, t.field_name nulls first`);
    const base = `${project.name}-translations`;
    if (query.format === "csv") {
      ctx.set("Content-Disposition", `attachment; filename="${downloadName(base, "csv")}"`);
      ctx.type = "text/csv; charset=utf-8";
      ctx.body = stringify(
        rows.map((r) => [r.schema_key, r.language, r.table_name, r.field_name ?? "", r.label, r.description].map(inert)),
        { header: true, columns: ["schema", "language", "table_name", "field_name", "label", "description"], bom: true },
      );
      return;
    }
    ctx.set("Content-Disposition", `attachment; filename="${downloadName(base, "json")}"`);
    ctx.type = "application/json";
    ctx.body = JSON.stringify(nested(rows), null, 2);
  },
});

export const translationRoutes = [list, add, update, remove, exportRoute];
