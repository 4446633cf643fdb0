/**
 * Factories for templates, parsed schemas and generators (rows written directly; the
 * routes are what the tests exercise).
 */
import { z } from "zod";
import { sql, type DatabasePool } from "../../shared/db/pool.ts";
import { parseDdl } from "../../shared/sqlddl/index.ts";
import { templateInput, type TemplateInput } from "../../shared/templates/input.ts";
import { insertTemplate } from "../../shared/templates/write.ts";

export const blogDdl = `
CREATE TABLE users (id SERIAL PRIMARY KEY, email VARCHAR(255) NOT NULL UNIQUE);
CREATE TABLE posts (id SERIAL PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users (id), title VARCHAR(200) NOT NULL);`;

/** A ready schema of a project, parsed from PostgreSQL DDL (default: users and posts). */
export async function buildSchema(pool: DatabasePool, projectId: number, userId: number, ddl = blogDdl, name = "blog"): Promise<number> {
  const parsed = parseDdl(ddl, "PostgreSQL").schema;
  return pool.oneFirst(sql.type(z.object({ id: z.number() }))`
    insert into schemas (project_id, user_id, name, database_type, sql_text, parsed, tables_count, status)
    values (${projectId}, ${userId}, ${name}, 'PostgreSQL', ${ddl}, ${sql.jsonb(parsed as never)}, ${parsed.tables.length}, 'ready')
    returning id`);
}

/** A template of a project (or, with `ownerId`, a top-level one); fields default to a one-file template. */
export async function buildTemplate(
  pool: DatabasePool,
  place: { projectId: number } | { ownerId: number },
  userId: number,
  overrides: Partial<z.input<typeof templateInput>> = {},
): Promise<number> {
  const input: TemplateInput = templateInput.parse({
    name: "Greeting",
    content: "Hello {:name:}",
    variables: [{ name: "name", type: "string", required: true }],
    files: [{ file_name: "hello/{:name|kebab:}.txt", content: "Hi {:name|pascal:}" }],
    ...overrides,
  });
  return pool.transaction((tx) => insertTemplate(tx, place as never, userId, input));
}

/** A generator row owned by `userId`. */
export async function buildGenerator(
  pool: DatabasePool,
  input: { userId: number; projectId: number; templateIds: number[]; teamId?: number | null; schemaId?: number | null; status?: string; values?: Record<string, unknown> },
): Promise<number> {
  return pool.transaction(async (tx) => {
    const id = await tx.oneFirst(sql.type(z.object({ id: z.number() }))`
      insert into generators (user_id, team_id, project_id, name, status, schema_id, "values")
      values (${input.userId}, ${input.teamId ?? null}, ${input.projectId}, 'Gen', ${input.status ?? "Draft"}, ${input.schemaId ?? null},
        ${sql.jsonb((input.values ?? {}) as never)})
      returning id`);
    for (const [position, templateId] of input.templateIds.entries()) {
      await tx.query(sql.type(z.object({}))`insert into generator_templates (generator_id, template_id, position) values (${id}, ${templateId}, ${position})`);
    }
    return id;
  });
}
