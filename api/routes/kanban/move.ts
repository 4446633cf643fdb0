/**
 * A card move, as both move routes perform it: under the board's lock, the card lands at
 * index `order` of the target column (a column of the same board) and the others shift;
 * a `moved` activity and the `CardMoved` event are written in the same transaction.
 */
import type { CommonQueryMethods } from "../../../shared/db/pool.ts";
import type { UserRow } from "../../../shared/db/users.ts";
import { notFound } from "../../../shared/errors.ts";
import { recordActivity } from "../../../shared/kanban/activities.ts";
import { moveCard, type CardRow } from "../../../shared/kanban/cards.ts";
import { cardMoved } from "../../../shared/kanban/events.ts";
import { findColumn } from "../../../shared/kanban/store.ts";
import { cardForWrite } from "./load.ts";

/**
 * Moves card `cardId` to `columnId` at `order`; `projectId`, when the path names one, must be
 * the card's project. @throws 404 (card, or a column of another board), 403, 409 wip_limit_reached
 */
export async function performMove(tx: CommonQueryMethods, user: UserRow, cardId: number, columnId: number, order: number, projectId?: number): Promise<CardRow> {
  const { card, project } = await cardForWrite(tx, cardId, user);
  if (projectId !== undefined && project.id !== projectId) throw notFound("Card");
  const target = await findColumn(tx, columnId);
  if (!target || target.board_id !== card.board_id) throw notFound("Column");
  const source = target.id === card.column_id ? target : await findColumn(tx, card.column_id);
  const position = await moveCard(tx, card, target, order);
  if (target.id === card.column_id && position === card.position) return card;
  const description = target.id === card.column_id ? `moved the card within "${target.name}"` : `moved the card from "${source?.name ?? "?"}" to "${target.name}"`;
  await recordActivity(tx, card.id, user.id, "moved", description, {
    column_id: { old: card.column_id, new: target.id },
    order: { old: card.position, new: position },
  });
  await cardMoved(tx, card.board_id, { cardId: card.id, oldColumnId: card.column_id, newColumnId: target.id, order: position });
  return { ...card, column_id: target.id, position };
}
