/**
 * Kanban boards of a project (spec "Kanban", first group and `/kanban-boards/{id}`): the
 * boards with their columns and cards, board creation with its column names, the move
 * route under the project's path, and a board's read and rename.
 */
import { z } from "zod";
import { countBoards, insertBoard, lockProjectBoards, MAX_BOARDS_PER_PROJECT, renameBoard } from "../../../shared/kanban/store.ts";
import { currentUser } from "../../context.ts";
import { registerChannelAuthorizer } from "../../realtime/channelAuth.ts";
import { canViewProject } from "../../policies/project.ts";
import { findProject } from "../../../shared/db/projects.ts";
import { findBoard } from "../../../shared/kanban/store.ts";
import { projectForWrite } from "../../policies/projectGuard.ts";
import { boardResource } from "../../presenters/kanban.ts";
import { idParams } from "../jobs/jobs.schema.ts";
import { projectParams } from "../projects/projects.schema.ts";
import { defineRoute } from "../route.ts";
import { createBoardBody, moveBody, projectCardParams, updateBoardBody } from "./kanban.schema.ts";
import { boardForRead, boardForWrite, presentBoards } from "./load.ts";
import { boardEncodings, boardListAccess, boardListEtag, cachedBoardList, etagListed } from "./boardCache.ts";
import { invalid, notFound } from "../../../shared/errors.ts";
import { performMove } from "./move.ts";
import { projectStateResponses } from "../projectStates.ts";

const tags = ["Kanban"];
const boardEnvelope = z.object({ message: z.string(), board: boardResource });

const list = defineRoute({
  method: "get",
  path: "/projects/{projectId}/kanban",
  summary: "The kanban boards of a project, with columns in order and their cards in order",
  description:
    "Cards are listed with assignees, labels and `comments_count`; `GET /kanban-cards/{id}` has the full card with comments and activities. The answer carries an `ETag` that changes with every change to what it shows; `If-None-Match` with it answers 304. Sent compressed (`Content-Encoding: br` or `gzip`) when `Accept-Encoding` allows, each coding with its own ETag.",
  tags,
  auth: "bearer",
  params: projectParams,
  responses: {
    200: { description: "Boards", schema: z.object({ data: z.array(boardResource) }) },
    304: { description: "Not modified (the ETag matches)" },
  },
  handler: async (ctx, { params }) => {
    const { pool } = ctx.deps;
    const user = currentUser(ctx);
    // One statement authorizes and names the version; the answer itself comes from the cache.
    const found = await boardListAccess(pool, params.projectId, user.id);
    if (!found || !canViewProject(user, found)) throw notFound("Project");
    ctx.set("Cache-Control", "private, no-cache");
    ctx.vary("Accept-Encoding");
    const encoding = boardEncodings.find((coding) => ctx.acceptsEncodings(coding) === coding);
    if (etagListed(ctx.get("If-None-Match"), boardListEtag(params.projectId, found.key))) {
      ctx.set("ETag", boardListEtag(params.projectId, found.key, encoding));
      ctx.status = 304;
      return;
    }
    const answer = await cachedBoardList(pool, params.projectId, found.key, encoding);
    ctx.set("ETag", answer.etag);
    if (encoding) ctx.set("Content-Encoding", encoding);
    ctx.type = "application/json";
    ctx.body = answer.body;
  },
});

const create = defineRoute({
  method: "post",
  path: "/projects/{projectId}/kanban",
  summary: `Create a board with its columns (names, in order); a project holds at most ${MAX_BOARDS_PER_PROJECT} boards`,
  tags,
  auth: "bearer",
  params: projectParams,
  body: createBoardBody,
  responses: { ...projectStateResponses, 201: { description: "Created", schema: boardEnvelope } },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const { pool } = ctx.deps;
    const board = await pool.transaction(async (tx) => {
      const project = await projectForWrite(tx, params.projectId, user, "content");
      await lockProjectBoards(tx, project.id);
      if ((await countBoards(tx, project.id)) >= MAX_BOARDS_PER_PROJECT) throw invalid({ name: [`A project holds at most ${MAX_BOARDS_PER_PROJECT} boards.`] });
      return insertBoard(tx, project.id, user.id, body.name, body.columns);
    });
    const [presented] = await presentBoards(pool, [board]);
    ctx.status = 201;
    ctx.body = { message: "Board created.", board: presented };
  },
});

const projectMove = defineRoute({
  method: "post",
  path: "/projects/{projectId}/kanban/cards/{cardId}/move",
  summary: "Move a card of the project to a column at an index",
  description:
    "`order` is the 0-based index in the target column (clamped to its end); the other cards shift. A full target column answers 409 `wip_limit_reached` (`column_full` when it holds 10,000 cards) and changes nothing; a column of another board is 404. Publishes `CardMoved`.",
  tags,
  auth: "bearer",
  params: projectCardParams,
  body: moveBody,
  responses: { ...projectStateResponses, 200: { description: "Moved", schema: z.object({ message: z.string() }) }, 409: { description: "The target column is full (`wip_limit_reached`, `column_full`); or the project is archived (`project_archived`)" } },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    await ctx.deps.pool.transaction((tx) => performMove(tx, user, params.cardId, body.column_id, body.order, params.projectId));
    ctx.body = { message: "Card moved." };
  },
});

const show = defineRoute({
  method: "get",
  path: "/kanban-boards/{id}",
  summary: "A board with its columns and cards",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { 200: { description: "The board", schema: z.object({ board: boardResource }) } },
  handler: async (ctx, { params }) => {
    const { board } = await boardForRead(ctx.deps.pool, params.id, currentUser(ctx));
    const [presented] = await presentBoards(ctx.deps.pool, [board]);
    ctx.body = { board: presented };
  },
});

const update = defineRoute({
  method: "put",
  path: "/kanban-boards/{id}",
  summary: "Rename a board",
  tags,
  auth: "bearer",
  params: idParams,
  body: updateBoardBody,
  responses: { ...projectStateResponses, 200: { description: "Updated", schema: boardEnvelope } },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const { pool } = ctx.deps;
    const board = await pool.transaction(async (tx) => {
      const { board } = await boardForWrite(tx, params.id, user);
      await renameBoard(tx, board.id, body.name);
      return { ...board, name: body.name, updated_at: new Date() };
    });
    const [presented] = await presentBoards(pool, [board]);
    ctx.body = { message: "Board updated.", board: presented };
  },
});

// Board events go to whoever may view the board's project.
registerChannelAuthorizer("private-kanban-board.", async (deps, user, id) => {
  if (!/^[1-9][0-9]{0,15}$/.test(id)) return false;
  const board = await findBoard(deps.pool, Number(id));
  if (!board) return false;
  const project = await findProject(deps.pool, board.project_id, user.id);
  return project !== null && canViewProject(user, project);
});

export const kanbanBoardRoutes = [list, create, projectMove, show, update];
