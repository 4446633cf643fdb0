/**
 * Generators: a named, ordered set of a project's templates plus a schema and variable
 * values, run as one code generation. Reads carry the caller's role in the generator's
 * team, so the policy decides from one row.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";

export const generatorStatuses = ["Draft", "Published", "Archived"] as const;
export type GeneratorStatus = (typeof generatorStatuses)[number];

export const generatorRow = z.object({
  id: z.number(),
  user_id: z.number(),
  owner_name: z.string(),
  owner_username: z.string(),
  team_id: z.number().nullable(),
  project_id: z.number(),
  name: z.string(),
  description: z.string(),
  status: z.enum(generatorStatuses),
  schema_id: z.number().nullable(),
  values: z.record(z.string(), z.unknown()),
  apply_adjustments: z.boolean(),
  created_at: z.date(),
  updated_at: z.date(),
  /** The caller's team role in the generator's team (owner, admin, member, viewer), or null. */
  team_role: z.enum(["owner", "admin", "member", "viewer"]).nullable(),
  templates: z.array(z.object({ id: z.number(), name: z.string() })),
});
export type GeneratorRow = z.infer<typeof generatorRow>;

/**
 * Select list of `generatorRow` over `generators g join users o` for caller `userId`. A
 * generator is part of its project: one whose project was (soft-)deleted is gone with it.
 */
export const generatorSelect = (userId: number) => sql.fragment`
  select g.id, g.user_id, o.name as owner_name, o.username as owner_username, g.team_id, g.project_id, g.name, g.description,
    g.status, g.schema_id, g."values", g.apply_adjustments, g.created_at, g.updated_at,
    (select r.name from team_members tm join team_roles r on r.id = tm.role_id
      where tm.team_id = g.team_id and tm.user_id = ${userId}) as team_role,
    coalesce((select json_agg(json_build_object('id', t.id, 'name', t.name) order by gt.position)
      from generator_templates gt join templates t on t.id = gt.template_id where gt.generator_id = g.id), '[]') as templates
  from generators g join users o on o.id = g.user_id join projects gp on gp.id = g.project_id and gp.deleted_at is null`;

/** SQL condition over `g`: its project is not deleted (for queries not built on `generatorSelect`). */
export const generatorLive = sql.fragment`exists (select 1 from projects gp where gp.id = g.project_id and gp.deleted_at is null)`;

/** A generator with the caller's team role, or null; `lock` row-locks it. */
export async function findGenerator(conn: CommonQueryMethods, id: number, userId: number, lock = false): Promise<GeneratorRow | null> {
  if (lock) await conn.query(sql.type(z.object({ id: z.number() }))`select id from generators where id = ${id} for update`);
  return conn.maybeOne(sql.type(generatorRow)`${generatorSelect(userId)} where g.id = ${id}`);
}

/** Replaces the ordered templates of a generator. */
export async function setGeneratorTemplates(tx: CommonQueryMethods, generatorId: number, templateIds: readonly number[]): Promise<void> {
  await tx.query(sql.type(z.object({}))`delete from generator_templates where generator_id = ${generatorId}`);
  if (templateIds.length === 0) return;
  await tx.query(sql.type(z.object({}))`
    insert into generator_templates (generator_id, template_id, position)
    select ${generatorId}, u.id, u.position - 1 from unnest(${sql.array([...templateIds], "int8")}) with ordinality as u(id, position)`);
}
