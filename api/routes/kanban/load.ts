/**
 * Loading kanban rows for a route with the project's policy (whoever may view the project
 * reads its boards; changing them needs the right to edit its content) and presenting
 * boards and cards. A thing in a project the caller does not see is 404 under its own name.
 *
 * Write loaders run in a transaction and take, in this order, the project's share lock
 * (projectForWrite) and the board's row lock, then re-read the row under the lock: changes
 * of positions on one board run one at a time, and never in an order that could deadlock.
 */
import type { CommonQueryMethods } from "../../../shared/db/pool.ts";
import type { ProjectRow } from "../../../shared/db/projects.ts";
import type { UserRow } from "../../../shared/db/users.ts";
import { AppError, notFound } from "../../../shared/errors.ts";
import { findCard, listCards, type CardRow } from "../../../shared/kanban/cards.ts";
import { loadCardDetails, loadCardSummaries } from "../../../shared/kanban/details.ts";
import { findBoard, findColumn, listColumns, lockBoard, type BoardRow, type ColumnRow } from "../../../shared/kanban/store.ts";
import { projectForRead, projectForWrite } from "../../policies/projectGuard.ts";
import type { LinkSigner } from "../../presenters/attachment.ts";
import { presentBoard, presentCard, presentCardSummary, presentColumn } from "../../presenters/kanban.ts";

/** Runs `load`, answering a hidden project's 404 as a 404 of `what`. */
export async function hiddenAs<T>(what: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (error instanceof AppError && error.status === 404) throw notFound(what);
    throw error;
  }
}

/** A board the caller may see. @throws 404 */
export async function boardForRead(conn: CommonQueryMethods, boardId: number, user: UserRow): Promise<{ board: BoardRow; project: ProjectRow }> {
  const board = await findBoard(conn, boardId);
  if (!board) throw notFound("Board");
  const project = await hiddenAs("Board", () => projectForRead(conn, board.project_id, user));
  return { board, project };
}

/** A board the caller may change, locked. @throws 404, 403, 423, 402, 409 */
export async function boardForWrite(tx: CommonQueryMethods, boardId: number, user: UserRow): Promise<{ board: BoardRow; project: ProjectRow }> {
  const found = await findBoard(tx, boardId);
  if (!found) throw notFound("Board");
  const project = await hiddenAs("Board", () => projectForWrite(tx, found.project_id, user, "content"));
  await lockBoard(tx, found.id);
  const board = await findBoard(tx, boardId);
  if (!board) throw notFound("Board");
  return { board, project };
}

/** A card the caller may see. @throws 404 */
export async function cardForRead(conn: CommonQueryMethods, cardId: number, user: UserRow): Promise<{ card: CardRow; project: ProjectRow }> {
  const card = await findCard(conn, cardId);
  if (!card) throw notFound("Card");
  const project = await hiddenAs("Card", () => projectForRead(conn, card.project_id, user));
  return { card, project };
}

/** A card the caller may change, its board locked and the card read under the lock. @throws 404, 403, 423, 402, 409 */
export async function cardForWrite(tx: CommonQueryMethods, cardId: number, user: UserRow): Promise<{ card: CardRow; project: ProjectRow }> {
  const found = await findCard(tx, cardId);
  if (!found) throw notFound("Card");
  const project = await hiddenAs("Card", () => projectForWrite(tx, found.project_id, user, "content"));
  await lockBoard(tx, found.board_id);
  const card = await findCard(tx, cardId);
  if (!card) throw notFound("Card");
  return { card, project };
}

/** A column of board `boardId` (read under the board's lock for its card count). @throws 404 on the column, named `field` */
export async function columnOfBoard(tx: CommonQueryMethods, columnId: number, boardId: number, what = "Column"): Promise<ColumnRow> {
  const column = await findColumn(tx, columnId);
  if (!column || column.board_id !== boardId) throw notFound(what);
  return column;
}

/** Boards with their columns in position order and each column's cards in order: three queries however large. */
export async function presentBoards(conn: CommonQueryMethods, boards: readonly BoardRow[]) {
  const ids = boards.map((b) => b.id);
  const [columns, cards, { details, counts }] = await Promise.all([listColumns(conn, ids), listCards(conn, ids), loadCardSummaries(conn, ids)]);
  const byColumn = new Map<number, ReturnType<typeof presentCardSummary>[]>();
  for (const card of cards) {
    const list = byColumn.get(card.column_id) ?? [];
    list.push(presentCardSummary(card, details, counts.get(card.id) ?? 0));
    byColumn.set(card.column_id, list);
  }
  const byBoard = new Map<number, ReturnType<typeof presentColumn>[]>();
  for (const column of columns) {
    byBoard.set(column.board_id, [...(byBoard.get(column.board_id) ?? []), presentColumn(column, byColumn.get(column.id) ?? [])]);
  }
  return boards.map((board) => presentBoard(board, byBoard.get(board.id) ?? []));
}

/** The full card resource. @throws 404 when it is gone */
export async function loadCardResource(conn: CommonQueryMethods, cardId: number, sign: LinkSigner) {
  const card = await findCard(conn, cardId);
  if (!card) throw notFound("Card");
  return presentCard(card, await loadCardDetails(conn, [card.id]), sign);
}
