/**
 * Every schema route × {owner, team admin, member, viewer, stranger, site admin}: readers
 * read, content writers (owner, team admin, member) change, strangers see nothing. A refused
 * request writes nothing and an allowed change writes (the fingerprint of the tables schema
 * routes and their parse jobs write, before and after, once the worker has finished the parse
 * jobs of earlier cells).
 */
import t from "tap";
import { z } from "zod";
import type { DatabasePool } from "../../shared/db/pool.ts";
import { sql } from "../../shared/db/pool.ts";
import { applyRevision, insertSchema } from "../../shared/schemas/store.ts";
import { parseDdl } from "../../shared/sqlddl/index.ts";
import { startTestApp } from "../support/app.ts";
import { workerIdle } from "../support/workerIdle.ts";
import { buildUsers, buildWorld, content, runMatrix, view, type MatrixRow, type World } from "../support/matrix.ts";

interface SchemaWorld extends World {
  schema: number;
  other: number;
  translation: number;
}

const ddl = "CREATE TABLE users (id int PRIMARY KEY, email varchar(100) NOT NULL);";

/** A ready schema inserted as the parse job would leave it. */
async function readySchema(pool: DatabasePool, projectId: number, userId: number, name: string): Promise<number> {
  return pool.transaction(async (tx) => {
    const { schemaId, revisionId } = await insertSchema(tx, { projectId, userId, name, databaseType: "MySQL", sqlText: ddl });
    const parsed = parseDdl(ddl, "MySQL");
    await applyRevision(tx, { id: revisionId, schema_id: schemaId, user_id: userId, name, database_type: "MySQL", sql_text: ddl }, parsed.schema, parsed.warnings);
    return schemaId;
  });
}

const created = { ...content, owner: 201, teamAdmin: 201, member: 201, superAdmin: 201 };

/** What the schema routes and their parse jobs write (allowed cells show that their writes land here). */
const tables = ["schemas", "schema_revisions", "schema_tables", "schema_fields", "schema_translations", "sql_parses", "jobs", "audit_log", "outbox_events"];

const rows: MatrixRow<SchemaWorld>[] = [
  { name: "list schemas", method: "GET", path: (w) => `/api/projects/${w.project}/schemas`, expect: view },
  { name: "read schema", method: "GET", path: (w) => `/api/projects/${w.project}/schemas/${w.schema}`, expect: view },
  { name: "export schema", method: "GET", path: (w) => `/api/projects/${w.project}/schemas/${w.schema}/export?database_type=sqlite`, expect: view },
  {
    name: "compare schemas",
    method: "POST",
    path: (w) => `/api/projects/${w.project}/schemas/compare`,
    body: (w) => ({ schema_id_1: w.schema, schema_id_2: w.other }),
    writesNothing: true,
    expect: view,
  },
  {
    name: "create schema",
    method: "POST",
    path: (w) => `/api/projects/${w.project}/schemas`,
    body: () => ({ name: "New", sql_text: ddl, database_type: "MySQL" }),
    expect: created,
  },
  { name: "rename schema", method: "PUT", path: (w) => `/api/projects/${w.project}/schemas/${w.schema}`, body: () => ({ name: "Renamed" }), expect: content },
  {
    name: "re-parse schema",
    method: "PUT",
    path: (w) => `/api/projects/${w.project}/schemas/${w.schema}`,
    body: () => ({ sql_text: `${ddl}\nCREATE TABLE roles (id int);` }),
    expect: content,
  },
  { name: "delete schema", method: "DELETE", path: (w) => `/api/projects/${w.project}/schemas/${w.schema}`, expect: content },
  { name: "list translations", method: "GET", path: (w) => `/api/projects/${w.project}/schemas/${w.schema}/translations`, expect: view },
  {
    name: "add translation",
    method: "POST",
    path: (w) => `/api/projects/${w.project}/schemas/${w.schema}/translations`,
    body: () => ({ language: "fr", table_name: "users", label: "Utilisateurs" }),
    expect: created,
  },
  {
    name: "update translation",
    method: "PUT",
    path: (w) => `/api/projects/${w.project}/schemas/${w.schema}/translations/${w.translation}`,
    body: () => ({ label: "Benutzerinnen" }),
    expect: content,
  },
  { name: "delete translation", method: "DELETE", path: (w) => `/api/projects/${w.project}/schemas/${w.schema}/translations/${w.translation}`, expect: content },
  { name: "export translations", method: "GET", path: (w) => `/api/projects/${w.project}/translations/export?format=csv`, expect: view },
  {
    name: "a schema of another project is not found through this one",
    method: "GET",
    path: (w) => `/api/projects/${w.otherProject}/schemas/${w.schema}`,
    expect: { owner: 404, teamAdmin: 404, member: 404, viewer: 404, stranger: 404, siteAdmin: 404 },
  },
];

t.test("schema authorization matrix", async (t) => {
  const app = await startTestApp(t, { worker: true });
  const settle = () => workerIdle(app.pool);
  const users = await buildUsers(app.pool);
  await runMatrix(t, app.url, rows, async () => {
    const world = await buildWorld(app.pool, users);
    const schema = await readySchema(app.pool, world.project, world.ids.owner, "Main");
    const other = await readySchema(app.pool, world.project, world.ids.owner, "Other");
    const translation = await app.pool.oneFirst(sql.type(z.object({ id: z.number() }))`
      insert into schema_translations (schema_id, language, table_name, label) values (${schema}, 'de', 'users', 'Benutzer') returning id`);
    return { ...world, schema, other, translation };
  }, app.pool, { settle, effects: true, tables });
});
