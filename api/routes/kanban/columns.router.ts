/**
 * Kanban columns (`/kanban-columns`): added at the end of their board, renamed, given a WIP
 * limit (lowering it below the current count is allowed: the column then accepts nothing
 * new), re-ordered by `position`, and deleted — a column with cards only when the request
 * names a column of the same board to move them to (`?target_column_id=`).
 */
import { z } from "zod";
import { appendColumn, countColumns, deleteColumn, findBoard, findColumn, findColumnWithProject, MAX_COLUMNS_PER_BOARD, repositionColumn, updateColumnFields } from "../../../shared/kanban/store.ts";
import { invalid, notFound } from "../../../shared/errors.ts";
import { currentUser } from "../../context.ts";
import { columnResource, presentColumn } from "../../presenters/kanban.ts";
import { messageResponse } from "../auth/auth.schema.ts";
import { idParams } from "../jobs/jobs.schema.ts";
import { defineRoute } from "../route.ts";
import { createColumnBody, deleteColumnQuery, updateColumnBody } from "./kanban.schema.ts";
import { boardForWrite, hiddenAs, presentBoards } from "./load.ts";
import type { CommonQueryMethods, DatabasePool } from "../../../shared/db/pool.ts";
import type { UserRow } from "../../../shared/db/users.ts";
import { projectStateResponses } from "../projectStates.ts";

const tags = ["Kanban"];
const columnEnvelope = z.object({ message: z.string(), column: columnResource });

/** A column the caller may change, its board locked. @throws 404, 403, 423 */
async function columnForWrite(tx: CommonQueryMethods, id: number, user: UserRow) {
  const found = await findColumnWithProject(tx, id);
  if (!found) throw notFound("Column");
  await hiddenAs("Column", () => boardForWrite(tx, found.board_id, user));
  const column = await findColumn(tx, id);
  if (!column) throw notFound("Column");
  return column;
}

/** The presented column as the board read shows it. */
async function presentedColumn(conn: DatabasePool, boardId: number, columnId: number) {
  const board = await findBoard(conn, boardId);
  if (!board) throw notFound("Column");
  const [presented] = await presentBoards(conn, [board]);
  const column = presented!.columns.find((c) => c.id === columnId);
  if (!column) throw notFound("Column");
  return column;
}

const create = defineRoute({
  method: "post",
  path: "/kanban-columns",
  summary: `Add a column at the end of a board (a board holds at most ${MAX_COLUMNS_PER_BOARD})`,
  tags,
  auth: "bearer",
  body: createColumnBody,
  responses: { ...projectStateResponses, 201: { description: "Created", schema: columnEnvelope }, 404: { description: "No such board (or one the caller does not see)" } },
  handler: async (ctx, { body }) => {
    const user = currentUser(ctx);
    const { pool } = ctx.deps;
    const id = await pool.transaction(async (tx) => {
      const { board } = await boardForWrite(tx, body.board_id, user);
      if ((await countColumns(tx, board.id)) >= MAX_COLUMNS_PER_BOARD) throw invalid({ board_id: [`A board holds at most ${MAX_COLUMNS_PER_BOARD} columns.`] });
      return appendColumn(tx, board.id, body.name, body.wip_limit ?? null);
    });
    const column = await findColumn(pool, id);
    ctx.status = 201;
    ctx.body = { message: "Column created.", column: presentColumn(column!, []) };
  },
});

const update = defineRoute({
  method: "put",
  path: "/kanban-columns/{id}",
  summary: "Rename a column, set its WIP limit or move it to another position (0-based)",
  tags,
  auth: "bearer",
  params: idParams,
  body: updateColumnBody,
  responses: { ...projectStateResponses, 200: { description: "Updated", schema: columnEnvelope } },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const { pool } = ctx.deps;
    const column = await pool.transaction(async (tx) => {
      const column = await columnForWrite(tx, params.id, user);
      await updateColumnFields(tx, column.id, { ...(body.name !== undefined ? { name: body.name } : {}), ...(body.wip_limit !== undefined ? { wipLimit: body.wip_limit } : {}) });
      if (body.position !== undefined) await repositionColumn(tx, column, body.position);
      return column;
    });
    ctx.body = { message: "Column updated.", column: await presentedColumn(pool, column.board_id, column.id) };
  },
});

const remove = defineRoute({
  method: "delete",
  path: "/kanban-columns/{id}",
  summary: "Delete a column; one with cards needs `target_column_id` (its cards move to the end of that column)",
  description: "Without a target a column with cards answers 409 `column_not_empty`; a target without room for the cards answers 409 `wip_limit_reached` (`column_full` past 10,000 cards).",
  tags,
  auth: "bearer",
  params: idParams,
  query: deleteColumnQuery,
  responses: { ...projectStateResponses, 200: { description: "Deleted", schema: messageResponse }, 409: { description: "The column has cards and no target, or the target is too full; or the project is archived (`project_archived`)" } },
  handler: async (ctx, { params, query }) => {
    const user = currentUser(ctx);
    await ctx.deps.pool.transaction(async (tx) => {
      const column = await columnForWrite(tx, params.id, user);
      let target = null;
      if (query.target_column_id !== undefined) {
        target = await findColumn(tx, query.target_column_id);
        if (!target || target.board_id !== column.board_id || target.id === column.id) throw notFound("Target column");
      }
      await deleteColumn(tx, column, target);
    });
    ctx.body = { message: "Column deleted." };
  },
});

export const kanbanColumnRoutes = [create, update, remove];
