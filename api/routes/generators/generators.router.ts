/**
 * Generators (spec "Route groups listed by method and path only"): CRUD and run. A
 * generator is created in a project by someone who may edit its content, optionally
 * shared with one of the creator's teams; see api/policies/generator.ts for who may do what.
 *
 * Status: Draft ⇄ Published, either → Archived, Archived → Draft (unarchive). Publishing
 * needs at least one template; an Archived generator is read-only apart from unarchiving.
 * A generator is part of its project: a locked, expired or archived project refuses changes
 * to it and runs of it, like any other change inside the project.
 */
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods } from "../../../shared/db/pool.ts";
import { findProject, subscriptionExpired, type ProjectRow } from "../../../shared/db/projects.ts";
import { findUserById, type UserRow } from "../../../shared/db/users.ts";
import { AppError, forbidden, invalid, notFound, type FieldErrors } from "../../../shared/errors.ts";
import { findGenerator, generatorLive, generatorSelect, generatorRow, setGeneratorTemplates, type GeneratorRow, type GeneratorStatus } from "../../../shared/generators/store.ts";
import { currentUser } from "../../context.ts";
import { paginated, paginatedSchema, pageFragment } from "../../pagination.ts";
import { authorize } from "../../policies/authorize.ts";
import { canDeleteGenerator, canUpdateGenerator, canViewGenerator } from "../../policies/generator.ts";
import { canEditProjectContent } from "../../policies/project.ts";
import { projectArchived, projectForWrite, projectLocked, subscriptionExpiredError } from "../../policies/projectGuard.ts";
import { generatorResource, presentGenerator } from "../../presenters/generator.ts";
import { messageResponse } from "../auth/auth.schema.ts";
import { idParams } from "../jobs/jobs.schema.ts";
import { defineRoute } from "../route.ts";
import { createGeneratorBody, listGeneratorsQuery, updateGeneratorBody } from "./generators.schema.ts";
import { projectStateResponses } from "../projectStates.ts";

const tags = ["Generators"];
const envelope = z.object({ message: z.string(), generator: generatorResource });

const transitions: Record<GeneratorStatus, GeneratorStatus[]> = {
  Draft: ["Draft", "Published", "Archived"],
  Published: ["Published", "Draft", "Archived"],
  Archived: ["Archived", "Draft"],
};

/** A generator the caller may see. @throws 404 */
export async function generatorForRead(conn: CommonQueryMethods, id: number, user: UserRow, lock = false): Promise<GeneratorRow> {
  const row = await findGenerator(conn, id, user.id, lock);
  if (!row || !canViewGenerator(user, row)) throw notFound("Generator");
  return row;
}

/**
 * The generator's project, share-locked, if it accepts changes now. The caller's rights come
 * from the generator policy, not from the project's, so only the project's state is checked.
 * @throws 404, 423, 402, 409
 */
export async function generatorProjectForWrite(tx: CommonQueryMethods, generator: GeneratorRow, user: UserRow): Promise<ProjectRow> {
  const project = await findProject(tx, generator.project_id, user.id, "share");
  if (!project) throw notFound("Project");
  if (project.is_locked) throw projectLocked();
  if (subscriptionExpired(project)) throw subscriptionExpiredError();
  if (project.archived_at) throw projectArchived();
  return project;
}

/** Whether `user` may now edit the content of project `projectId`. */
async function editsContent(tx: CommonQueryMethods, projectId: number, user: UserRow): Promise<boolean> {
  const project = await findProject(tx, projectId, user.id);
  return project !== null && canEditProjectContent(user, project);
}

/**
 * A generator runs and changes on its owner's right to edit its project's content, the right
 * its owner needed to create it: once the owner lost it (removed from the project's team, made
 * a viewer), only a caller who holds that right themselves may still run or change it; the
 * owner and the other members of the generator's team may not, as a run reads the project's
 * current templates and schema and writes a generation into it. Deleting stays open to its
 * owner, to clear it away.
 * @throws 403
 */
export async function requireOwnerContentRight(tx: CommonQueryMethods, generator: GeneratorRow, user: UserRow): Promise<void> {
  if (await editsContent(tx, generator.project_id, user)) return;
  const owner = generator.user_id === user.id ? null : await findUserById(tx, generator.user_id);
  if (!owner || !(await editsContent(tx, generator.project_id, owner))) {
    throw forbidden("The generator's owner may no longer change its project's content, so it may not be run or changed.");
  }
}

interface Refs {
  team_id?: number | null | undefined;
  schema_id?: number | null | undefined;
  template_ids?: number[] | undefined;
}

/** Checks that the team, schema and templates a generator names are usable; returns field errors. */
async function checkRefs(conn: CommonQueryMethods, projectId: number, user: UserRow, refs: Refs): Promise<FieldErrors> {
  const errors: FieldErrors = {};
  if (refs.team_id != null) {
    const member = await conn.exists(sql.type(z.object({}))`select 1 from team_members where team_id = ${refs.team_id} and user_id = ${user.id}`);
    if (!member) errors.team_id = ["Choose a team you are a member of."];
  }
  if (refs.schema_id != null) {
    const ready = await conn.exists(sql.type(z.object({}))`
      select 1 from schemas where id = ${refs.schema_id} and project_id = ${projectId} and status = 'ready'`);
    if (!ready) errors.schema_id = ["The schema must be a parsed schema of the generator's project."];
  }
  if (refs.template_ids?.length) {
    const found = await conn.oneFirst(sql.type(z.object({ count: z.number() }))`
      select count(*)::int as count from templates where project_id = ${projectId} and id = any(${sql.array(refs.template_ids, "int8")})`);
    if (found !== refs.template_ids.length) errors.template_ids = ["Every template must be a template of the generator's project."];
  }
  return errors;
}

const list = defineRoute({
  method: "get",
  path: "/generators",
  summary: "Generators the caller owns or shares through a team",
  tags,
  auth: "bearer",
  query: listGeneratorsQuery,
  responses: { 200: { description: "A page of generators", schema: paginatedSchema(generatorResource) } },
  handler: async (ctx, { query }) => {
    const user = currentUser(ctx);
    const filters = [sql.fragment`(g.user_id = ${user.id} or exists (select 1 from team_members tm where tm.team_id = g.team_id and tm.user_id = ${user.id}))`, generatorLive];
    if (query.project_id) filters.push(sql.fragment`g.project_id = ${query.project_id}`);
    if (query.status) filters.push(sql.fragment`g.status = ${query.status}`);
    const where = sql.join(filters, sql.fragment` and `);
    const [rows, total] = await Promise.all([
      ctx.deps.pool.any(sql.type(generatorRow)`${generatorSelect(user.id)} where ${where} order by g.updated_at desc, g.id desc ${pageFragment(query)}`),
      ctx.deps.pool.oneFirst(sql.type(z.object({ count: z.number() }))`select count(*)::int as count from generators g where ${where}`),
    ]);
    ctx.body = paginated(rows.map(presentGenerator), total, query, new URL(ctx.href));
  },
});

const show = defineRoute({
  method: "get",
  path: "/generators/{id}",
  summary: "A generator (its owner, members of its team; site admins see every one)",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { 200: { description: "The generator", schema: z.object({ generator: generatorResource }) } },
  handler: async (ctx, { params }) => {
    ctx.body = { generator: presentGenerator(await generatorForRead(ctx.deps.pool, params.id, currentUser(ctx))) };
  },
});

const create = defineRoute({
  method: "post",
  path: "/generators",
  summary: "Create a generator in a project whose content the caller may edit",
  tags,
  auth: "bearer",
  body: createGeneratorBody,
  responses: { ...projectStateResponses, 201: { description: "Created", schema: envelope }, 404: { description: "The project, team, schema or a template is not visible to the caller" } },
  handler: async (ctx, { body }) => {
    const user = currentUser(ctx);
    const generator = await ctx.deps.pool.transaction(async (tx) => {
      const project = await projectForWrite(tx, body.project_id, user, "content");
      const errors = await checkRefs(tx, project.id, user, body);
      if (body.status === "Published" && body.template_ids.length === 0) errors.status = ["A generator needs at least one template to be published."];
      if (Object.keys(errors).length) throw invalid(errors);
      const id = await tx.oneFirst(sql.type(z.object({ id: z.number() }))`
        insert into generators (user_id, team_id, project_id, name, description, status, schema_id, "values", apply_adjustments)
        values (${user.id}, ${body.team_id}, ${project.id}, ${body.name}, ${body.description}, ${body.status}, ${body.schema_id}, ${sql.jsonb(body.values as never)},
          ${body.apply_adjustments})
        returning id`);
      await setGeneratorTemplates(tx, id, body.template_ids);
      return (await findGenerator(tx, id, user.id))!;
    });
    ctx.status = 201;
    ctx.body = { message: "Generator created.", generator: presentGenerator(generator) };
  },
});

const update = defineRoute({
  method: "put",
  path: "/generators/{id}",
  summary: "Update a generator (its owner or a member of its team, holding the admin role; super admins)",
  tags,
  auth: "bearer",
  params: idParams,
  body: updateGeneratorBody,
  responses: { ...projectStateResponses,
    200: { description: "Updated", schema: envelope },
    409: { description: "The generator is archived (`generator_archived`): only a change of its status to Draft is accepted; or the project is archived (`project_archived`)" },
  },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const generator = await ctx.deps.pool.transaction(async (tx) => {
      const current = await generatorForRead(tx, params.id, user, true);
      authorize(canUpdateGenerator(user, current), "Only the generator's owner or a member of its team holding the admin role may change it.");
      await requireOwnerContentRight(tx, current, user);
      await generatorProjectForWrite(tx, current, user);
      const status = body.status ?? current.status;
      if (current.status === "Archived" && (status === "Archived" || Object.keys(body).some((key) => key !== "status"))) {
        throw new AppError(409, "generator_archived", "The generator is archived; unarchive it (status Draft) before changing it.");
      }
      if (!transitions[current.status].includes(status)) {
        throw invalid({ status: [`A generator cannot go from ${current.status} to ${status}; unarchive to Draft first.`] });
      }
      const errors = await checkRefs(tx, current.project_id, user, { ...body, team_id: body.team_id !== current.team_id ? body.team_id : undefined });
      const templateCount = body.template_ids?.length ?? current.templates.length;
      if (status === "Published" && templateCount === 0) errors.status = ["A generator needs at least one template to be published."];
      if (Object.keys(errors).length) throw invalid(errors);
      const { template_ids: templateIds, values, ...fields } = body;
      const sets = Object.entries(fields).map(([column, value]) => sql.fragment`${sql.identifier([column])} = ${value}`);
      if (values !== undefined) sets.push(sql.fragment`"values" = ${sql.jsonb(values)}`);
      await tx.query(sql.type(ignoredRow)`
        update generators set ${sql.join([...sets, sql.fragment`updated_at = now()`], sql.fragment`, `)} where id = ${current.id}`);
      if (templateIds) await setGeneratorTemplates(tx, current.id, templateIds);
      return (await findGenerator(tx, current.id, user.id))!;
    });
    ctx.body = { message: "Generator updated.", generator: presentGenerator(generator) };
  },
});

const remove = defineRoute({
  method: "delete",
  path: "/generators/{id}",
  summary: "Delete a generator (its owner holding the admin role; super admins); its code generations stay, without the link",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { ...projectStateResponses, 200: { description: "Deleted", schema: messageResponse } },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    await ctx.deps.pool.transaction(async (tx) => {
      const current = await generatorForRead(tx, params.id, user, true);
      authorize(canDeleteGenerator(user, current), "Only the generator's owner, holding the admin role, may delete it.");
      await generatorProjectForWrite(tx, current, user);
      await tx.query(sql.type(ignoredRow)`delete from generators where id = ${current.id}`);
    });
    ctx.body = { message: "Generator deleted." };
  },
});

export const generatorRoutes = [list, create, show, update, remove];
