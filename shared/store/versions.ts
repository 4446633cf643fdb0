/**
 * Versions of a store template: the content of its source templates frozen at a publish.
 * Buyers receive the version they bought; later edits publish a new version.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";
import { loadFull, templateRow } from "../templates/store.ts";
import { normalizePackage } from "./normalize.ts";

export const frozenTemplate = z.object({
  name: z.string(),
  description: z.string(),
  engine_type: z.string(),
  content: z.string(),
  variables: z.array(
    z.object({ name: z.string(), description: z.string(), type: z.string(), required: z.boolean(), default_value: z.unknown(), position: z.number() }),
  ),
  files: z.array(z.object({ file_name: z.string(), content: z.string(), order: z.number(), repeat: z.string().nullable() })),
});
export type FrozenTemplate = z.infer<typeof frozenTemplate>;

export const versionRow = z.object({
  id: z.number(),
  store_template_id: z.number(),
  version: z.number(),
  content: z.array(frozenTemplate),
  created_at: z.date(),
});
export type VersionRow = z.infer<typeof versionRow>;

/** The current content of the given templates, in order, as a version would freeze it. */
export async function snapshotTemplates(conn: CommonQueryMethods, templateIds: number[]): Promise<FrozenTemplate[]> {
  const out: FrozenTemplate[] = [];
  for (const id of templateIds) {
    const row = await conn.maybeOne(sql.type(templateRow)`
      select id, project_id, owner_id, user_id, name, description, content, engine_type, created_at, updated_at from templates where id = ${id}`);
    if (!row) continue;
    const full = await loadFull(conn, row);
    out.push({
      name: full.name,
      description: full.description,
      engine_type: full.engine_type,
      content: full.content,
      variables: full.variables.map((v) => ({
        name: v.name,
        description: v.description,
        type: v.type,
        required: v.required,
        default_value: v.default_value ?? null,
        position: v.position,
      })),
      files: full.files.map((f) => ({ file_name: f.file_name, content: f.content, order: f.order, repeat: f.repeat })),
    });
  }
  return out;
}

/** Records a new version of `storeTemplateId` holding `content`; returns it. */
export async function insertVersion(tx: CommonQueryMethods, storeTemplateId: number, content: FrozenTemplate[]): Promise<VersionRow> {
  const { normalized, fileHashes } = normalizePackage(content);
  return tx.one(sql.type(versionRow)`
    insert into store_template_versions (store_template_id, version, content, normalized, file_hashes)
    values (${storeTemplateId},
      (select coalesce(max(version), 0) + 1 from store_template_versions where store_template_id = ${storeTemplateId}),
      ${sql.jsonb(content as never)}, ${normalized}, ${sql.array(fileHashes, "text")})
    returning id, store_template_id, version, content, created_at`);
}

/** One version by id. */
export async function findVersion(conn: CommonQueryMethods, id: number): Promise<VersionRow | null> {
  return conn.maybeOne(sql.type(versionRow)`
    select id, store_template_id, version, content, created_at from store_template_versions where id = ${id}`);
}
