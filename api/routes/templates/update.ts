/**
 * Shared steps of the template routes (project and top level): applying an update body
 * and re-reading the presented template.
 */
import type { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods } from "../../../shared/db/pool.ts";
import { loadFull, templateRow } from "../../../shared/templates/store.ts";
import { partsOf, replaceParts } from "../../../shared/templates/write.ts";
import { presentTemplate } from "../../presenters/template.ts";
import type { updateTemplateBody } from "./templates.schema.ts";

/** Applies an update body to template `id` (already authorised and locked). */
export async function updateTemplate(tx: CommonQueryMethods, id: number, body: z.infer<typeof updateTemplateBody>): Promise<void> {
  const { variables, files, ...fields } = body;
  const sets = Object.entries(fields).map(([column, value]) => sql.fragment`${sql.identifier([column])} = ${value}`);
  await tx.query(sql.type(ignoredRow)`
    update templates set ${sql.join([...sets, sql.fragment`updated_at = now()`], sql.fragment`, `)} where id = ${id}`);
  if (variables || files) {
    const current = await loadFull(tx, await tx.one(sql.type(templateRow)`
      select id, project_id, owner_id, user_id, name, description, content, engine_type, created_at, updated_at from templates where id = ${id}`));
    const parts = partsOf(current);
    await replaceParts(tx, id, variables ?? parts.variables, files ?? parts.files);
  }
}

/** The presented template `id`. */
export async function reloadTemplate(conn: CommonQueryMethods, id: number) {
  const row = await conn.one(sql.type(templateRow)`
    select id, project_id, owner_id, user_id, name, description, content, engine_type, created_at, updated_at from templates where id = ${id}`);
  return presentTemplate(await loadFull(conn, row));
}
