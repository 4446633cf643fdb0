/**
 * Projects: list (own and shared, or the public gallery), read, create (with a
 * subscription to the default plan), update, soft delete.
 */
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { recordEvent } from "../../../shared/events/outbox.ts";
import { ignoredRow, sql } from "../../../shared/db/pool.ts";
import { latestSubscriptionJoin, projectColumns, projectCounts, projectRow } from "../../../shared/db/projects.ts";
import { invalid } from "../../../shared/errors.ts";
import { createProject } from "../../../shared/projects/createProject.ts";
import { cancelProjectDeployments } from "../../../shared/deployments/projectDeleted.ts";
import { cancelProjectDeliveries } from "../../../shared/webhooks/projectDeleted.ts";
import { currentUser } from "../../context.ts";
import { paginated, paginatedSchema, pageFragment } from "../../pagination.ts";
import { projectForRead, projectForWrite } from "../../policies/projectGuard.ts";
import { presentProject, projectResource } from "../../presenters/project.ts";
import { defineRoute } from "../route.ts";
import { messageResponse } from "../auth/auth.schema.ts";
import { presentProjectWithTeams, reloadProject } from "./load.ts";
import { createProjectBody, listProjectsQuery, projectParams, updateProjectBody } from "./projects.schema.ts";
import { projectLockedResponse, projectStateResponses } from "../projectStates.ts";

const projectEnvelope = z.object({ message: z.string(), project: projectResource });

const list = defineRoute({
  method: "get",
  path: "/projects",
  summary: "The caller's projects (owned or shared through a team), or the public gallery",
  tags: ["Projects"],
  auth: "bearer",
  query: listProjectsQuery,
  responses: { 200: { description: "A page of projects", schema: paginatedSchema(projectResource) } },
  handler: async (ctx, { query }) => {
    const user = currentUser(ctx);
    const { pool } = ctx.deps;
    const filters = [sql.fragment`p.deleted_at is null`];
    if (query.public) {
      filters.push(sql.fragment`p.is_public and p.archived_at is null`);
    } else {
      filters.push(sql.fragment`(p.owner_id = ${user.id} or exists (
        select 1 from team_projects tp join team_members tm on tm.team_id = tp.team_id
        where tp.project_id = p.id and tm.user_id = ${user.id}))`);
      filters.push(query.archived ? sql.fragment`p.archived_at is not null` : sql.fragment`p.archived_at is null`);
    }
    if (query.q) filters.push(sql.fragment`p.name ilike ${`%${query.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`}`);
    const where = sql.join(filters, sql.fragment` and `);
    const [rows, total] = await Promise.all([
      pool.any(sql.type(projectRow)`
        select ${projectColumns(user.id)} from projects p join users o on o.id = p.owner_id ${latestSubscriptionJoin}
        where ${where} order by p.updated_at desc, p.id desc ${pageFragment(query)}`),
      pool.oneFirst(sql.type(z.object({ count: z.number() }))`select count(*)::int as count from projects p where ${where}`),
    ]);
    const counts = await projectCounts(pool, rows.map((r) => r.id));
    ctx.body = paginated(rows.map((row) => presentProject(user, row, counts.get(row.id)!)), total, query, new URL(ctx.href));
  },
});

const show = defineRoute({
  method: "get",
  path: "/projects/{projectId}",
  summary: "A project with its teams and counts",
  tags: ["Projects"],
  auth: "bearer",
  params: projectParams,
  responses: { 200: { description: "The project", schema: z.object({ project: projectResource }) } },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    const row = await projectForRead(ctx.deps.pool, params.projectId, user);
    ctx.body = { project: await presentProjectWithTeams(ctx.deps.pool, user, row) };
  },
});

const create = defineRoute({
  method: "post",
  path: "/projects",
  summary: "Create a project (with a subscription to the default plan)",
  tags: ["Projects"],
  auth: "bearer",
  body: createProjectBody,
  responses: { 201: { description: "Created", schema: projectEnvelope } },
  handler: async (ctx, { body }) => {
    const user = currentUser(ctx);
    const project = await ctx.deps.pool.transaction(async (tx) => {
      const id = await createProject(tx, {
        ownerId: user.id,
        name: body.name,
        ...(body.description !== undefined ? { description: body.description } : {}),
        ...(body.is_public !== undefined ? { isPublic: body.is_public } : {}),
        ...(body.allow_join_requests !== undefined ? { allowJoinRequests: body.allow_join_requests } : {}),
        ...(body.form_designer_snap_to_grid !== undefined ? { formDesignerSnapToGrid: body.form_designer_snap_to_grid } : {}),
        ...(body.form_designer_grid_size !== undefined ? { formDesignerGridSize: body.form_designer_grid_size } : {}),
      });
      if (body.allow_join_requests) {
        await tx.query(sql.type(ignoredRow)`update projects set join_code = ${newJoinCode()} where id = ${id}`);
      }
      return reloadProject(tx, user, id);
    });
    ctx.status = 201;
    ctx.body = { message: "Project created.", project };
  },
});

const newJoinCode = () => randomBytes(9).toString("base64url");

const update = defineRoute({
  method: "put",
  path: "/projects/{projectId}",
  summary: "Update a project's details and settings",
  description: "Turning allow_join_requests on without a join_code generates one.",
  tags: ["Projects"],
  auth: "bearer",
  params: projectParams,
  body: updateProjectBody,
  responses: { ...projectStateResponses, 200: { description: "Updated", schema: projectEnvelope } },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const project = await ctx.deps.pool.transaction(async (tx) => {
      const row = await projectForWrite(tx, params.projectId, user, "manage");
      const changes: Record<string, string | number | boolean | null> = { ...body };
      if (body.allow_join_requests && !row.join_code && body.join_code === undefined) changes.join_code = newJoinCode();
      if (typeof changes.join_code === "string") {
        const taken = await tx.exists(sql.type(z.object({}))`select 1 from projects where join_code = ${changes.join_code} and id <> ${row.id}`);
        if (taken) throw invalid({ join_code: ["The join code has already been taken."] });
      }
      const sets = Object.entries(changes).map(([column, value]) => sql.fragment`${sql.identifier([column])} = ${value}`);
      await tx.query(sql.type(ignoredRow)`
        update projects set ${sql.join([...sets, sql.fragment`updated_at = now()`], sql.fragment`, `)} where id = ${row.id}`);
      await recordEvent(tx, { type: "ProjectUpdated", projectId: row.id, actorId: user.id, payload: { changes: Object.keys(changes) } });
      return reloadProject(tx, user, row.id);
    });
    ctx.body = { message: "Project updated.", project };
  },
});

const remove = defineRoute({
  method: "delete",
  path: "/projects/{projectId}",
  summary: "Delete a project (owner only; the record is kept, every read treats it as gone)",
  description: "Deployments (commits and pushes too) and webhook deliveries still queued for the project are cancelled (recorded as failed: the project was deleted); nothing is deployed or sent for it afterwards.",
  tags: ["Projects"],
  auth: "bearer",
  params: projectParams,
  responses: { ...projectLockedResponse, 200: { description: "Deleted", schema: messageResponse } },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    await ctx.deps.pool.transaction(async (tx) => {
      const row = await projectForWrite(tx, params.projectId, user, "delete", { allowExpired: true, allowArchived: true });
      await tx.query(sql.type(ignoredRow)`
        update projects set deleted_at = now(), join_code = null, updated_at = now() where id = ${row.id}`);
      await cancelProjectDeliveries(tx, row.id);
      await cancelProjectDeployments(tx, row.id);
    });
    ctx.body = { message: "Project deleted." };
  },
});

export const projectRoutes = [list, show, create, update, remove];
