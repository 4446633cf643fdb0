/**
 * Templates as a part of a project: the `templates_count` of the project resource and the
 * `templates` section of project bundles (each template with its variables, files and the
 * values the project saved for it). Saved values of `schema` variables name schemas of the
 * bundle; they are mapped to the imported schemas' new ids, or dropped when unmapped.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";
import { registerProjectCounter } from "../db/projects.ts";
import { registerBundleSection, type ImportContext } from "../projects/bundle.ts";
import { templateInput } from "./input.ts";
import { loadFull, savedValues, templateRow } from "./store.ts";
import { schemaIdOf } from "./values.ts";
import { insertTemplate, partsOf } from "./write.ts";

registerProjectCounter("templates_count", sql.fragment`(select count(*)::int from templates t where t.project_id = p.id)`);

const bundledTemplate = z.intersection(
  templateInput,
  z.object({ id: z.number().int().positive(), values: z.record(z.string(), z.json()).default({}) }),
);
const section = z.array(bundledTemplate).max(1000);
type Section = z.infer<typeof section>;

async function exportTemplates(conn: CommonQueryMethods, projectId: number): Promise<Section> {
  const rows = await conn.any(sql.type(templateRow)`
    select id, project_id, owner_id, user_id, name, description, content, engine_type, created_at, updated_at
    from templates where project_id = ${projectId} order by id`);
  const out: Section = [];
  for (const row of rows) {
    const full = await loadFull(conn, row);
    out.push({
      id: row.id,
      name: row.name,
      description: row.description,
      content: row.content,
      engine_type: "ultimate",
      ...partsOf(full),
      values: (await savedValues(conn, projectId, row.id)) as Record<string, z.infer<ReturnType<typeof z.json>>>,
    });
  }
  return out;
}

function mapSchemaValues(values: Record<string, unknown>, schemaVariables: Set<string>, ctx: ImportContext): Record<string, unknown> {
  const schemas = ctx.ids.get("schemas");
  const mapped: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(values)) {
    if (!schemaVariables.has(name)) mapped[name] = value;
    else {
      const oldId = schemaIdOf(value);
      const newId = oldId === null ? undefined : schemas?.get(oldId);
      if (newId !== undefined) mapped[name] = newId;
    }
  }
  return mapped;
}

async function importTemplates(tx: CommonQueryMethods, data: Section, ctx: ImportContext): Promise<void> {
  const ids = new Map<number, number>();
  for (const { id: oldId, values, ...template } of data) {
    const id = await insertTemplate(tx, { projectId: ctx.projectId }, ctx.userId, template);
    ids.set(oldId, id);
    const schemaVariables = new Set(template.variables.filter((v) => v.type === "schema").map((v) => v.name));
    const mapped = mapSchemaValues(values, schemaVariables, ctx);
    if (Object.keys(mapped).length) {
      await tx.query(sql.type(z.object({}))`
        insert into template_variable_values (project_id, template_id, "values", updated_by)
        values (${ctx.projectId}, ${id}, ${sql.jsonb(mapped as never)}, ${ctx.userId})`);
    }
  }
  ctx.ids.set("templates", ids);
}

registerBundleSection<Section>({
  name: "templates",
  schema: section,
  export: exportTemplates,
  import: importTemplates,
  count: (data) => data.length,
});
