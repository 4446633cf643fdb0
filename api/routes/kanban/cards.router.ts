/**
 * Kanban cards (`/kanban-cards`): create into a column (at its end or at `order`; a full
 * column answers 409 `wip_limit_reached`, one holding MAX_CARDS_PER_COLUMN `column_full`), read in full, update with the card write form,
 * delete (with its comments, attachments and activities), and move. Every change writes its
 * activity and its board event in its own transaction.
 */
import { z } from "zod";
import { recordActivity } from "../../../shared/kanban/activities.ts";
import { deleteCard, insertCard } from "../../../shared/kanban/cards.ts";
import { cardCreated } from "../../../shared/kanban/events.ts";
import { currentUser } from "../../context.ts";
import { linkSigner } from "../../presenters/attachment.ts";
import { cardResource } from "../../presenters/kanban.ts";
import { messageResponse } from "../auth/auth.schema.ts";
import { idParams } from "../jobs/jobs.schema.ts";
import { defineRoute } from "../route.ts";
import { applyCardUpdate, checkLinks, linkNewCard } from "./cardWrite.ts";
import { createCardBody, moveCardBody, updateCardBody } from "./kanban.schema.ts";
import { boardForWrite, cardForRead, cardForWrite, columnOfBoard, hiddenAs, loadCardResource } from "./load.ts";
import { performMove } from "./move.ts";
import { findColumnWithProject } from "../../../shared/kanban/store.ts";
import { notFound } from "../../../shared/errors.ts";
import { projectStateResponses } from "../projectStates.ts";

const tags = ["Kanban"];
const cardEnvelope = z.object({ message: z.string(), card: cardResource });
const full = { 409: { description: "The column is full (`wip_limit_reached`, or `column_full` at 10,000 cards); or the project is archived (`project_archived`)" } };

const create = defineRoute({
  method: "post",
  path: "/kanban-cards",
  summary: "Create a card in a column (at its end, or at index `order`)",
  description: "Card write form plus `column_id`. Assignees must be people of the project and labels labels of the board (422). Publishes `CardCreated`.",
  tags,
  auth: "bearer",
  body: createCardBody,
  responses: { ...projectStateResponses, 201: { description: "Created", schema: cardEnvelope }, 404: { description: "No such column (or one the caller does not see)" }, ...full },
  handler: async (ctx, { body }) => {
    const user = currentUser(ctx);
    const { pool, config } = ctx.deps;
    const sign = linkSigner(config);
    const card = await pool.transaction(async (tx) => {
      const found = await findColumnWithProject(tx, body.column_id);
      if (!found) throw notFound("Column");
      const { board, project } = await hiddenAs("Column", () => boardForWrite(tx, found.board_id, user));
      const column = await columnOfBoard(tx, found.id, board.id);
      await checkLinks(tx, project.id, board.id, body);
      const id = await insertCard(tx, column, body.order, user.id, body);
      await recordActivity(tx, id, user.id, "created", `created the card in "${column.name}"`);
      await linkNewCard(tx, { id, title: body.title }, user, body);
      const card = await loadCardResource(tx, id, sign);
      await cardCreated(tx, board.id, card);
      return card;
    });
    ctx.status = 201;
    ctx.body = { message: "Card created.", card };
  },
});

const show = defineRoute({
  method: "get",
  path: "/kanban-cards/{id}",
  summary: "A card with assignees, labels, comments (with replies) and activities",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { 200: { description: "The card", schema: z.object({ card: cardResource }) } },
  handler: async (ctx, { params }) => {
    const { card } = await cardForRead(ctx.deps.pool, params.id, currentUser(ctx));
    ctx.body = { card: await loadCardResource(ctx.deps.pool, card.id, linkSigner(ctx.deps.config)) };
  },
});

const update = defineRoute({
  method: "put",
  path: "/kanban-cards/{id}",
  summary: "Update a card with the card write form",
  description: "Records an `updated` activity with `changes` (field → `{old, new}`) and publishes `CardUpdated`; a request that changes nothing records and publishes nothing.",
  tags,
  auth: "bearer",
  params: idParams,
  body: updateCardBody,
  responses: { ...projectStateResponses, 200: { description: "Updated", schema: cardEnvelope } },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const { pool, config } = ctx.deps;
    await pool.transaction(async (tx) => {
      const { card, project } = await cardForWrite(tx, params.id, user);
      await checkLinks(tx, project.id, card.board_id, body);
      await applyCardUpdate(tx, card, user, body);
    });
    ctx.body = { message: "Card updated.", card: await loadCardResource(pool, params.id, linkSigner(config)) };
  },
});

const remove = defineRoute({
  method: "delete",
  path: "/kanban-cards/{id}",
  summary: "Delete a card with its comments, attachments and activities",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { ...projectStateResponses, 200: { description: "Deleted", schema: messageResponse } },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    await ctx.deps.pool.transaction(async (tx) => {
      const { card } = await cardForWrite(tx, params.id, user);
      await deleteCard(tx, card);
    });
    ctx.body = { message: "Card deleted." };
  },
});

const move = defineRoute({
  method: "post",
  path: "/kanban-cards/{id}/move",
  summary: "Move a card to a column of its board at an index",
  description:
    "`{column_id, order}`; `status` (the target column id, as the spec's client sends it) may stand in for `column_id`. `order` is 0-based (default 0) and clamped to the column. 409 `wip_limit_reached` when the target is full (`column_full` when it holds 10,000 cards). Publishes `CardMoved` only.",
  tags,
  auth: "bearer",
  params: idParams,
  body: moveCardBody,
  responses: { ...projectStateResponses, 200: { description: "Moved", schema: cardEnvelope }, ...full },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const { pool, config } = ctx.deps;
    await pool.transaction((tx) => performMove(tx, user, params.id, body.column_id, body.order));
    ctx.body = { message: "Card moved.", card: await loadCardResource(pool, params.id, linkSigner(config)) };
  },
});

export const kanbanCardRoutes = [create, show, update, remove, move];
