/**
 * Comments of kanban cards: a body and attachments, with replies one level deep (a reply
 * to a reply answers the same top comment, so a thread reads in order).
 */
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods } from "../db/pool.ts";

/** Creates a comment on a card, or a reply to `parentId` (a comment of the same card). */
export async function insertComment(tx: CommonQueryMethods, cardId: number, userId: number, body: string, parentId: number | null = null): Promise<number> {
  return tx.oneFirst(sql.type(z.object({ id: z.number() }))`
    insert into kanban_comments (card_id, user_id, body, parent_id)
    values (${cardId}, ${userId}, ${body}, (select coalesce(parent_id, id) from kanban_comments where id = ${parentId}))
    returning id`);
}

/** Replaces a comment's body. */
export async function updateComment(tx: CommonQueryMethods, id: number, body: string): Promise<void> {
  await tx.query(sql.type(ignoredRow)`update kanban_comments set body = ${body}, updated_at = now() where id = ${id}`);
}

/** Deletes a comment with its replies and attachments. */
export async function deleteComment(tx: CommonQueryMethods, id: number): Promise<void> {
  await tx.query(sql.type(ignoredRow)`delete from kanban_comments where id = ${id}`);
}
