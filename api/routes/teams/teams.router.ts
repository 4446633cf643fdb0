/**
 * Teams: list (the caller's), read, create (the creator is its owner), update, delete,
 * the role list, and attaching projects to a team.
 */
import { z } from "zod";
import { ignoredRow, sql } from "../../../shared/db/pool.ts";
import { findTeam, teamColumns, teamRow, TEAM_ROLE } from "../../../shared/db/teams.ts";
import { conflict, forbidden, notFound } from "../../../shared/errors.ts";
import { currentUser, type AppContext } from "../../context.ts";
import { canDeleteTeam, canManageTeam, canViewTeam } from "../../policies/team.ts";
import { projectForWrite } from "../../policies/projectGuard.ts";
import { presentTeam, teamResource } from "../../presenters/team.ts";
import { defineRoute } from "../route.ts";
import { messageResponse } from "../auth/auth.schema.ts";
import { projectStateResponses } from "../projectStates.ts";

export const teamParams = z.object({ teamId: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER) });
const teamBody = z.object({ name: z.string().trim().min(1).max(255), description: z.string().max(5000).optional() });
const teamEnvelope = z.object({ message: z.string(), team: teamResource });

/** The team if the caller may see it (404 otherwise); `lock` for changes. */
export async function visibleTeam(ctx: AppContext, conn: Parameters<typeof findTeam>[0], teamId: number, lock = false) {
  const user = currentUser(ctx);
  const team = await findTeam(conn, teamId, user.id, lock);
  if (!team || !canViewTeam(user, team)) throw notFound("Team");
  return team;
}

const list = defineRoute({
  method: "get",
  path: "/teams",
  summary: "The teams the caller belongs to",
  tags: ["Teams"],
  auth: "bearer",
  responses: { 200: { description: "Teams", schema: z.object({ data: z.array(teamResource) }) } },
  handler: async (ctx) => {
    const user = currentUser(ctx);
    const rows = await ctx.deps.pool.any(sql.type(teamRow)`
      select ${teamColumns(user.id)} from teams t
      where exists (select 1 from team_members m where m.team_id = t.id and m.user_id = ${user.id})
      order by t.name, t.id`);
    ctx.body = { data: rows.map(presentTeam) };
  },
});

const show = defineRoute({
  method: "get",
  path: "/teams/{teamId}",
  summary: "A team",
  tags: ["Teams"],
  auth: "bearer",
  params: teamParams,
  responses: { 200: { description: "The team", schema: z.object({ team: teamResource }) } },
  handler: async (ctx, { params }) => {
    ctx.body = { team: presentTeam(await visibleTeam(ctx, ctx.deps.pool, params.teamId)) };
  },
});

const create = defineRoute({
  method: "post",
  path: "/teams",
  summary: "Create a team (the caller becomes its owner)",
  tags: ["Teams"],
  auth: "bearer",
  body: teamBody,
  responses: { 201: { description: "Created", schema: teamEnvelope } },
  handler: async (ctx, { body }) => {
    const user = currentUser(ctx);
    const team = await ctx.deps.pool.transaction(async (tx) => {
      const id = await tx.oneFirst(sql.type(z.object({ id: z.number() }))`
        insert into teams (owner_id, name, description) values (${user.id}, ${body.name}, ${body.description ?? ""}) returning id`);
      await tx.query(sql.type(ignoredRow)`insert into team_members (team_id, user_id, role_id) values (${id}, ${user.id}, ${TEAM_ROLE.owner})`);
      return (await findTeam(tx, id, user.id))!;
    });
    ctx.status = 201;
    ctx.body = { message: "Team created.", team: presentTeam(team) };
  },
});

const update = defineRoute({
  method: "put",
  path: "/teams/{teamId}",
  summary: "Update a team's name and description",
  tags: ["Teams"],
  auth: "bearer",
  params: teamParams,
  body: teamBody.partial().refine((v) => Object.keys(v).length > 0, { message: "Send at least one field to change." }),
  responses: { 200: { description: "Updated", schema: teamEnvelope } },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const team = await ctx.deps.pool.transaction(async (tx) => {
      const row = await visibleTeam(ctx, tx, params.teamId, true);
      if (!canManageTeam(user, row)) throw forbidden("Only the team's owner and admins may change it.");
      const sets = Object.entries(body).map(([column, value]) => sql.fragment`${sql.identifier([column])} = ${value}`);
      await tx.query(sql.type(ignoredRow)`update teams set ${sql.join([...sets, sql.fragment`updated_at = now()`], sql.fragment`, `)} where id = ${row.id}`);
      return (await findTeam(tx, row.id, user.id))!;
    });
    ctx.body = { message: "Team updated.", team: presentTeam(team) };
  },
});

const remove = defineRoute({
  method: "delete",
  path: "/teams/{teamId}",
  summary: "Delete a team (its owner only); its projects stay with their owners",
  tags: ["Teams"],
  auth: "bearer",
  params: teamParams,
  responses: { 200: { description: "Deleted", schema: messageResponse } },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    await ctx.deps.pool.transaction(async (tx) => {
      const row = await visibleTeam(ctx, tx, params.teamId, true);
      if (!canDeleteTeam(user, row)) throw forbidden("Only the team's owner may delete it.");
      await tx.query(sql.type(ignoredRow)`delete from teams where id = ${row.id}`);
    });
    ctx.body = { message: "Team deleted." };
  },
});

const roles = defineRoute({
  method: "get",
  path: "/team-roles",
  summary: "The roles a team member can hold",
  tags: ["Teams"],
  auth: "bearer",
  responses: { 200: { description: "Roles", schema: z.object({ data: z.array(z.object({ id: z.number(), name: z.string() })) }) } },
  handler: async (ctx) => {
    ctx.body = { data: await ctx.deps.pool.any(sql.type(z.object({ id: z.number(), name: z.string() }))`select id, name from team_roles order by id`) };
  },
});

const projectBody = z.object({ project_id: z.number().int().positive() });

const attachProject = defineRoute({
  method: "post",
  path: "/teams/{teamId}/projects",
  summary: "Share a project with a team (needs management rights on both; refused while the project is locked, expired or archived)",
  tags: ["Teams"],
  auth: "bearer",
  params: teamParams,
  body: projectBody,
  responses: { ...projectStateResponses, 201: { description: "Attached", schema: messageResponse }, 409: { description: "Already attached; or the project is archived (`project_archived`)" } },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    await ctx.deps.pool.transaction(async (tx) => {
      const team = await visibleTeam(ctx, tx, params.teamId, true);
      if (!canManageTeam(user, team)) throw forbidden("Only the team's owner and admins may share projects with it.");
      const project = await projectForWrite(tx, body.project_id, user, "manage");
      const added = await tx.maybeOne(sql.type(z.object({ team_id: z.number() }))`
        insert into team_projects (team_id, project_id) values (${team.id}, ${project.id}) on conflict do nothing returning team_id`);
      if (!added) throw conflict("The project is already shared with this team.");
    });
    ctx.status = 201;
    ctx.body = { message: "Project shared with the team." };
  },
});

const detachProject = defineRoute({
  method: "delete",
  path: "/teams/{teamId}/projects/{projectId}",
  summary: "Stop sharing a project with a team (refused while the project is locked, expired or archived)",
  tags: ["Teams"],
  auth: "bearer",
  params: teamParams.extend({ projectId: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER) }),
  responses: { ...projectStateResponses, 200: { description: "Detached", schema: messageResponse } },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    await ctx.deps.pool.transaction(async (tx) => {
      const team = await visibleTeam(ctx, tx, params.teamId, true);
      if (!canManageTeam(user, team)) throw forbidden("Only the team's owner and admins may change its projects.");
      const shared = await tx.exists(sql.type(z.object({}))`
        select 1 from team_projects where team_id = ${team.id} and project_id = ${params.projectId}`);
      if (!shared) throw notFound("Project");
      // Who a project is shared with is part of the project: a locked, expired or archived
      // project keeps its teams (423, 402, 409), as it refuses being shared (attachProject).
      // The team's managers manage the project through this very team, so 403 cannot occur.
      await projectForWrite(tx, params.projectId, user, "manage");
      await tx.query(sql.type(ignoredRow)`delete from team_projects where team_id = ${team.id} and project_id = ${params.projectId}`);
    });
    ctx.body = { message: "The project is no longer shared with the team." };
  },
});

export const teamRoutes = [list, show, create, update, remove, roles, attachProject, detachProject];
