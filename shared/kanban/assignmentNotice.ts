/**
 * Telling people a card was assigned to them (notification kind `kanban_card_assigned`, by
 * push and e-mail as their settings allow), whichever route assigned them: the assignees
 * route, or the card write form's `assignees` on create and update. Whoever assigned
 * themselves is not told. Queued on the assigning transaction, so a rolled-back change tells
 * nobody.
 */
import type { CommonQueryMethods } from "../db/pool.ts";
import { notifyByEmail } from "../notifications/email.ts";
import { notifyByPush } from "../notifications/notify.ts";

/** Who assigned, and the card as the notice names it. */
export interface Assignment {
  assigner: { id: number; name: string };
  card: { id: number; title: string };
}

/** Queues the notices of `userIds` newly assigned to a card (call in the assigning transaction). */
export async function notifyAssigned(tx: CommonQueryMethods, { assigner, card }: Assignment, userIds: readonly number[]): Promise<void> {
  for (const userId of userIds) {
    if (userId === assigner.id) continue;
    await notifyByPush(tx, { userId, kind: "kanban_card_assigned", title: "Card assigned to you", body: `${assigner.name} assigned you to card #${card.id}.`, url: `/kanban-cards/${card.id}` });
    await notifyByEmail(tx, { userId, kind: "kanban_card_assigned", params: { assigner: assigner.name, card: String(card.id), title: card.title }, path: `/kanban-cards/${card.id}` });
  }
}
