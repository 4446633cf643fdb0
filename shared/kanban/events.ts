/**
 * Live board events (spec "Channel events", DESIGN §14) on `private-kanban-board.{boardId}`,
 * published on the transaction of the change, so a rolled-back change emits nothing.
 */
import type { CommonQueryMethods } from "../db/pool.ts";
import { publish } from "../events/publish.ts";
import type { FieldChange } from "./activities.ts";

/** The channel of a board. */
export const boardChannel = (boardId: number) => `private-kanban-board.${boardId}`;

/** `CardCreated` with the presented card. */
export async function cardCreated(tx: CommonQueryMethods, boardId: number, card: unknown): Promise<void> {
  await publish(tx, { channel: boardChannel(boardId), event: "CardCreated", data: { card } });
}

/** `CardUpdated` with the changed fields, each `{old, new}`. */
export async function cardUpdated(tx: CommonQueryMethods, boardId: number, cardId: number, changes: Record<string, FieldChange>): Promise<void> {
  await publish(tx, { channel: boardChannel(boardId), event: "CardUpdated", data: { card_id: cardId, changes } });
}

/** `CardMoved`: where the card was and where it landed. */
export async function cardMoved(
  tx: CommonQueryMethods,
  boardId: number,
  move: { cardId: number; oldColumnId: number; newColumnId: number; order: number },
): Promise<void> {
  await publish(tx, {
    channel: boardChannel(boardId),
    event: "CardMoved",
    data: { card_id: move.cardId, old_column_id: move.oldColumnId, new_column_id: move.newColumnId, order: move.order },
  });
}
