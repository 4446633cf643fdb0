/**
 * Project states: lock/unlock (events ProjectLocked/ProjectUnlocked), archive/unarchive,
 * and joining a project by its join code.
 */
import { z } from "zod";
import { recordEvent } from "../../../shared/events/outbox.ts";
import { ignoredRow, sql } from "../../../shared/db/pool.ts";
import { findProject, subscriptionExpired } from "../../../shared/db/projects.ts";
import { AppError, conflict, notFound } from "../../../shared/errors.ts";
import { currentUser } from "../../context.ts";
import { projectForWrite } from "../../policies/projectGuard.ts";
import { projectResource } from "../../presenters/project.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import { messageResponse } from "../auth/auth.schema.ts";
import { reloadProject } from "./load.ts";
import { joinBody, projectParams } from "./projects.schema.ts";
import { projectMembersTeam } from "../../../shared/projects/membersTeam.ts";
import { projectLockedResponse, projectStateResponses } from "../projectStates.ts";

const lock = defineRoute({
  method: "post",
  path: "/projects/{projectId}/lock",
  summary: "Lock a project: every change to it and its content is refused until it is unlocked",
  tags: ["Projects"],
  auth: "bearer",
  params: projectParams,
  responses: { 200: { description: "Locked", schema: messageResponse } },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    await ctx.deps.pool.transaction(async (tx) => {
      const row = await projectForWrite(tx, params.projectId, user, "manage", { allowLocked: true, allowExpired: true, allowArchived: true });
      if (row.is_locked) return;
      await tx.query(sql.type(ignoredRow)`update projects set is_locked = true, updated_at = now() where id = ${row.id}`);
      await recordEvent(tx, { type: "ProjectLocked", projectId: row.id, actorId: user.id });
    });
    ctx.body = { message: "Project locked." };
  },
});

const unlock = defineRoute({
  method: "post",
  path: "/projects/{projectId}/unlock",
  summary: "Unlock a project",
  tags: ["Projects"],
  auth: "bearer",
  params: projectParams,
  responses: { 200: { description: "Unlocked", schema: messageResponse } },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    await ctx.deps.pool.transaction(async (tx) => {
      const row = await projectForWrite(tx, params.projectId, user, "manage", { allowLocked: true, allowExpired: true, allowArchived: true });
      if (!row.is_locked) return;
      await tx.query(sql.type(ignoredRow)`update projects set is_locked = false, updated_at = now() where id = ${row.id}`);
      await recordEvent(tx, { type: "ProjectUnlocked", projectId: row.id, actorId: user.id });
    });
    ctx.body = { message: "Project unlocked." };
  },
});

function archiveRoute(archive: boolean): RouteSpec {
  return defineRoute({
    method: "post",
    path: `/projects/{projectId}/${archive ? "archive" : "unarchive"}`,
    summary: archive ? "Archive a project (hidden from the list, read-only)" : "Bring an archived project back",
    tags: ["Projects"],
    auth: "bearer",
    params: projectParams,
    responses: { ...projectLockedResponse, 200: { description: "Done", schema: z.object({ message: z.string(), project: projectResource }) } },
    handler: async (ctx, { params }) => {
      const user = currentUser(ctx);
      const project = await ctx.deps.pool.transaction(async (tx) => {
        // Shelving or restoring changes no content: like lock and delete, it stays open when the
        // subscription has run out (an unarchived expired project still refuses changes with 402).
        // A locked project must be unlocked first, as for delete.
        const row = await projectForWrite(tx, params.projectId, user, "manage", { allowArchived: true, allowExpired: true });
        await tx.query(sql.type(ignoredRow)`
          update projects set archived_at = ${archive ? sql.fragment`coalesce(archived_at, now())` : null}, updated_at = now() where id = ${row.id}`);
        await recordEvent(tx, { type: "ProjectUpdated", projectId: row.id, actorId: user.id, payload: { changes: ["archived"], archived: archive } });
        return reloadProject(tx, user, row.id);
      });
      ctx.body = { message: archive ? "Project archived." : "Project restored from the archive.", project };
    },
  });
}

const join = defineRoute({
  method: "post",
  path: "/projects/join",
  summary: "Join a project by its join code (when it allows join requests)",
  description: "The caller becomes a member of the project's members team.",
  tags: ["Projects"],
  auth: "bearer",
  body: joinBody,
  responses: { ...projectStateResponses, 200: { description: "Joined", schema: z.object({ message: z.string(), project: projectResource }) }, 404: { description: "No project takes this join code" } },
  handler: async (ctx, { body }) => {
    const user = currentUser(ctx);
    const project = await ctx.deps.pool.transaction(async (tx) => {
      const id = await tx.maybeOneFirst(sql.type(z.object({ id: z.number() }))`
        select id from projects where join_code = ${body.join_code} and allow_join_requests and deleted_at is null and archived_at is null
        for update`);
      if (!id) throw notFound("Project");
      const row = (await findProject(tx, id, user.id))!;
      // Joining changes who the project is shared with: refused while it is locked or soft-locked.
      if (row.is_locked) throw new AppError(423, "project_locked", "The project is locked; it cannot be joined now.");
      if (subscriptionExpired(row)) throw new AppError(402, "subscription_expired", "The project's subscription has expired; it cannot be joined now.");
      if (row.access !== null) throw conflict("You already have access to this project.", "already_member");
      const teamId = await projectMembersTeam(tx, row);
      await tx.query(sql.type(ignoredRow)`insert into team_members (team_id, user_id, role_id) values (${teamId}, ${user.id}, 3)`);
      return reloadProject(tx, user, id);
    });
    ctx.body = { message: "You joined the project.", project };
  },
});

export const projectStateRoutes = [lock, unlock, archiveRoute(true), archiveRoute(false), join];
