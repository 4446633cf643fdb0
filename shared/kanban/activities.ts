/**
 * The activity log of a card (spec "Activity": created, updated, commented, moved,
 * assigned), written in the transaction of the change it records, so it exists exactly
 * when the change does.
 */
import { ignoredRow, sql, type CommonQueryMethods } from "../db/pool.ts";

export type ActivityType = "created" | "updated" | "commented" | "moved" | "assigned";

/** One field's change: what it was and what it is. */
export interface FieldChange {
  old: unknown;
  new: unknown;
}

/** Records an activity of `userId` on card `cardId`. */
export async function recordActivity(
  tx: CommonQueryMethods,
  cardId: number,
  userId: number,
  type: ActivityType,
  description: string,
  changes: Record<string, FieldChange> = {},
): Promise<void> {
  await tx.query(sql.type(ignoredRow)`
    insert into kanban_activities (card_id, user_id, type, description, changes)
    values (${cardId}, ${userId}, ${type}, ${description}, ${sql.jsonb(changes as never)})`);
}
