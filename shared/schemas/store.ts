/**
 * Persistence of parsed schemas: the schema row, the revisions waiting for their parse, and
 * the anchors (schema_tables, schema_fields) that give tables and fields ids which stay the
 * same across re-parses as long as their names do.
 *
 * Glossary: a *revision* is one create or update (name, dialect, SQL text) waiting in
 * `schema_revisions` for its `schemas__parse` job; it is applied to the schema only when it
 * parses, and only when it is newer than the revision applied last.
 */
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods } from "../db/pool.ts";
import type { AppError } from "../errors.ts";
import { recordEvent } from "../events/outbox.ts";
import { lockProjectForContent } from "../projects/writable.ts";
import { dialectSchema, parsedSchemaSchema, type ParsedSchema, type ParseWarning } from "../sqlddl/index.ts";

export const parseWarningSchema = z.object({ line: z.number(), column: z.number(), message: z.string() });

/** A schema row as the routes read it. */
export const schemaRow = z.object({
  id: z.number(),
  project_id: z.number(),
  user_id: z.number().nullable(),
  name: z.string(),
  database_type: dialectSchema,
  sql_text: z.string(),
  parsed: parsedSchemaSchema.nullable(),
  warnings: z.array(parseWarningSchema),
  tables_count: z.number(),
  status: z.enum(["parsing", "ready"]),
  revision: z.number(),
  created_at: z.date(),
  updated_at: z.date(),
});
export type SchemaRow = z.infer<typeof schemaRow>;

/** A ready schema with its parse. */
export type ReadySchema = SchemaRow & { parsed: ParsedSchema };

export const revisionRow = z.object({
  id: z.number(),
  schema_id: z.number(),
  user_id: z.number().nullable(),
  name: z.string(),
  database_type: dialectSchema,
  sql_text: z.string(),
});
export type RevisionRow = z.infer<typeof revisionRow>;

/** The qualified name a table's anchor is keyed by. */
export const qualifiedName = (table: { schema_name: string | null; table_name: string }) =>
  table.schema_name ? `${table.schema_name}.${table.table_name}` : table.table_name;

/** Reads a ready schema of a project (null when absent, still parsing, or in another project). */
export async function findReadySchema(conn: CommonQueryMethods, projectId: number, schemaId: number, lock = false): Promise<ReadySchema | null> {
  const row = await conn.maybeOne(sql.type(schemaRow)`
    select * from schemas where id = ${schemaId} and project_id = ${projectId} and status = 'ready'
    ${lock ? sql.fragment`for update` : sql.fragment``}`);
  return row as ReadySchema | null;
}

/** A ready schema's name and dialect, with its parse as the JSON text it is stored as. */
export const storedParseRow = z.object({ id: z.number(), name: z.string(), database_type: dialectSchema, parsed_json: z.string() });
/** A ready schema's parse as stored (see findStoredParse). */
export type StoredParse = z.infer<typeof storedParseRow>;

/**
 * Reads a ready schema of a project with its parse left as JSON text (null when absent,
 * still parsing, or in another project): a parse thread reads and checks it, so a large
 * schema is not decoded and validated on the event loop of the process that asked.
 */
export async function findStoredParse(conn: CommonQueryMethods, projectId: number, schemaId: number): Promise<StoredParse | null> {
  return conn.maybeOne(sql.type(storedParseRow)`
    select id, name, database_type, parsed::text as parsed_json from schemas
    where id = ${schemaId} and project_id = ${projectId} and status = 'ready' and parsed is not null`);
}

/** Inserts a schema that waits for its first parse, and its revision; returns both ids. */
export async function insertSchema(
  tx: CommonQueryMethods,
  input: { projectId: number; userId: number; name: string; databaseType: string; sqlText: string },
): Promise<{ schemaId: number; revisionId: number }> {
  const schemaId = await tx.oneFirst(sql.type(z.object({ id: z.number() }))`
    insert into schemas (project_id, user_id, name, database_type, sql_text)
    values (${input.projectId}, ${input.userId}, ${input.name}, ${input.databaseType}, ${input.sqlText}) returning id`);
  const revisionId = await insertRevision(tx, { schemaId, userId: input.userId, name: input.name, databaseType: input.databaseType, sqlText: input.sqlText });
  return { schemaId, revisionId };
}

/** Records a revision of an existing schema; returns its id. */
export async function insertRevision(
  tx: CommonQueryMethods,
  input: { schemaId: number; userId: number; name: string; databaseType: string; sqlText: string },
): Promise<number> {
  return tx.oneFirst(sql.type(z.object({ id: z.number() }))`
    insert into schema_revisions (schema_id, user_id, name, database_type, sql_text)
    values (${input.schemaId}, ${input.userId}, ${input.name}, ${input.databaseType}, ${input.sqlText}) returning id`);
}

/**
 * Applies a parsed revision: the schema takes its name, dialect, text and parse when the
 * revision is newer than the one applied last; the revision row goes either way. Records
 * `DatabaseParsed`. Returns whether the schema changed.
 *
 * The project must still accept changes: it is share-locked as a content route locks it, so
 * a lock of the project waits for this transaction or this one sees the lock. When the
 * project was locked, archived or deleted (or its subscription ran out) after the revision
 * was recorded, the revision is discarded instead (with a schema that never parsed) and the
 * refusal is returned, for the caller to throw once this transaction has committed.
 */
export async function applyRevision(
  tx: CommonQueryMethods,
  revision: RevisionRow,
  parsed: ParsedSchema,
  warnings: ParseWarning[],
): Promise<boolean | AppError> {
  const projectId = await tx.maybeOneFirst(sql.type(z.object({ project_id: z.number() }))`
    select project_id from schemas where id = ${revision.schema_id}`);
  // The project row is locked before the schema row, in the order the routes take them.
  const refusal = projectId === null ? null : await lockProjectForContent(tx, projectId);
  if (refusal) {
    await discardRevision(tx, revision);
    return refusal;
  }
  const current = await tx.maybeOne(sql.type(z.object({ revision: z.number(), project_id: z.number() }))`
    select revision, project_id from schemas where id = ${revision.schema_id} for update`);
  // The row's name, not the caller's copy: a rename while the text was parsing renamed the revision too.
  const name = await tx.maybeOneFirst(sql.type(z.object({ name: z.string() }))`delete from schema_revisions where id = ${revision.id} returning name`);
  if (!current || current.revision > revision.id) return false;
  await tx.query(sql.type(ignoredRow)`
    update schemas set name = ${name ?? revision.name}, database_type = ${revision.database_type}, sql_text = ${revision.sql_text},
      parsed = ${sql.jsonb(parsed as never)}, warnings = ${sql.jsonb(warnings as never)}, tables_count = ${parsed.tables.length},
      status = 'ready', revision = ${revision.id}, updated_at = now()
    where id = ${revision.schema_id}`);
  await syncAnchors(tx, revision.schema_id, parsed);
  await recordEvent(tx, {
    type: "DatabaseParsed",
    projectId: current.project_id,
    actorId: revision.user_id,
    payload: { schema_id: revision.schema_id, database_type: revision.database_type, tables_count: parsed.tables.length, warnings_count: warnings.length },
  });
  return true;
}

/**
 * Drops a revision that did not parse. A schema that never parsed (a create) goes with it:
 * a failed create leaves nothing behind.
 */
export async function discardRevision(tx: CommonQueryMethods, revision: RevisionRow): Promise<void> {
  await tx.query(sql.type(ignoredRow)`delete from schema_revisions where id = ${revision.id}`);
  await tx.query(sql.type(ignoredRow)`
    delete from schemas s where s.id = ${revision.schema_id} and s.status = 'parsing'
      and not exists (select 1 from schema_revisions r where r.schema_id = s.id)`);
}

/** What a `schemas__parse` job was queued to parse (its payload). */
export type ParseTarget = { target: "schema"; schema_id: number; revision_id: number } | { target: "sql_parse"; parse_id: number };

/**
 * Drops what a parse job cancelled before it ran was to parse, as a parse that failed would:
 * the revision, and with it a schema that never parsed (a cancelled create leaves no schema
 * behind, since a schema is either parsed or on its way), or the stand-alone parse not yet
 * parsed. A schema that parsed before keeps its current text.
 */
export async function discardCancelledParse(tx: CommonQueryMethods, target: ParseTarget): Promise<void> {
  if (target.target === "sql_parse") {
    await tx.query(sql.type(ignoredRow)`delete from sql_parses where id = ${target.parse_id} and parsed is null`);
    return;
  }
  const revision = await tx.maybeOne(sql.type(revisionRow)`
    select id, schema_id, user_id, name, database_type, sql_text from schema_revisions where id = ${target.revision_id} and schema_id = ${target.schema_id}`);
  if (revision) await discardRevision(tx, revision);
}

/** Keeps one anchor per table and field of `parsed`, reusing the ids of names seen before. */
async function syncAnchors(tx: CommonQueryMethods, schemaId: number, parsed: ParsedSchema): Promise<void> {
  const tableNames: string[] = [];
  const seen = new Set<string>();
  for (const table of parsed.tables) {
    const name = qualifiedName(table);
    if (!seen.has(name)) tableNames.push(name);
    seen.add(name);
  }
  await tx.query(sql.type(ignoredRow)`
    delete from schema_tables where schema_id = ${schemaId} and qualified_name <> all(${sql.array(tableNames, "text")})`);
  const tables = await tx.any(sql.type(z.object({ id: z.number(), qualified_name: z.string() }))`
    insert into schema_tables (schema_id, position, qualified_name)
    select ${schemaId}, t.position, t.name from unnest(${sql.array(tableNames, "text")}) with ordinality as t(name, position)
    on conflict (schema_id, qualified_name) do update set position = excluded.position
    returning id, qualified_name`);
  const tableIds = new Map(tables.map((t) => [t.qualified_name, t.id]));
  const fieldTables: number[] = [];
  const fieldNames: string[] = [];
  const positions: number[] = [];
  const fieldSeen = new Set<string>();
  for (const table of parsed.tables) {
    const tableId = tableIds.get(qualifiedName(table))!;
    table.fields.forEach((field, index) => {
      const key = `${tableId}\u0000${field.field_name}`;
      if (fieldSeen.has(key)) return;
      fieldSeen.add(key);
      fieldTables.push(tableId);
      fieldNames.push(field.field_name);
      positions.push(index + 1);
    });
  }
  await tx.query(sql.type(ignoredRow)`
    delete from schema_fields f using schema_tables t
    where f.table_id = t.id and t.schema_id = ${schemaId}
      and (f.table_id, f.field_name) not in (
        select k.table_id, k.field_name from unnest(${sql.array(fieldTables, "int8")}, ${sql.array(fieldNames, "text")}) as k(table_id, field_name))`);
  await tx.query(sql.type(ignoredRow)`
    insert into schema_fields (table_id, field_name, position)
    select * from unnest(${sql.array(fieldTables, "int8")}, ${sql.array(fieldNames, "text")}, ${sql.array(positions, "int4")})
    on conflict (table_id, field_name) do update set position = excluded.position`);
}

/** Anchor ids of a schema: table id by qualified name, field id by table id and field name. */
export interface Anchors {
  tables: Map<string, number>;
  fields: Map<string, number>;
}

/** Key of a field anchor in `Anchors.fields`. */
export const fieldKey = (tableId: number, fieldName: string) => `${tableId}\u0000${fieldName}`;

/** Reads the anchors of a schema. */
export async function loadAnchors(conn: CommonQueryMethods, schemaId: number): Promise<Anchors> {
  const rows = await conn.any(sql.type(z.object({ table_id: z.number(), qualified_name: z.string(), field_id: z.number().nullable(), field_name: z.string().nullable() }))`
    select t.id as table_id, t.qualified_name, f.id as field_id, f.field_name
    from schema_tables t left join schema_fields f on f.table_id = t.id
    where t.schema_id = ${schemaId}`);
  const anchors: Anchors = { tables: new Map(), fields: new Map() };
  for (const row of rows) {
    anchors.tables.set(row.qualified_name, row.table_id);
    if (row.field_id !== null && row.field_name !== null) anchors.fields.set(fieldKey(row.table_id, row.field_name), row.field_id);
  }
  return anchors;
}
