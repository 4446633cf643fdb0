/**
 * Replies on a ticket and what they set off: a user's reply reopens a ticket that waited
 * for them; a staff reply puts an open ticket to `pending` (waiting for the user) and tells
 * the user by e-mail and push, as their settings allow (in their language). Internal notes
 * change nothing and tell no one.
 */
import type { DatabaseTransactionConnection } from "../db/pool.ts";
import { conflict } from "../errors.ts";
import { enqueueMail } from "../mail/enqueueMail.ts";
import { notifyByPush } from "../notifications/notify.ts";
import { wantsNotification } from "../settings/store.ts";
import { insertMessage, updateTicket, type MessageRow, type TicketRow } from "./store.ts";

export interface ReplyInput {
  ticket: TicketRow;
  authorId: number;
  body: string;
  fromStaff: boolean;
  isInternal: boolean;
  /** Where the web client shows the ticket (for the e-mail's button). */
  link: string;
}

/** Adds a reply to a locked ticket. @throws 409 `ticket_closed` */
export async function replyToTicket(tx: DatabaseTransactionConnection, input: ReplyInput): Promise<MessageRow> {
  const { ticket } = input;
  if (ticket.status === "closed") throw conflict("The ticket is closed; open a new one.", "ticket_closed");
  const message = await insertMessage(tx, { ticketId: ticket.id, authorId: input.authorId, body: input.body, isInternal: input.isInternal, fromStaff: input.fromStaff });
  if (input.isInternal) return message;
  if (!input.fromStaff) {
    if (ticket.status !== "open") await updateTicket(tx, ticket.id, { status: "open" });
    return message;
  }
  if (ticket.status === "open") await updateTicket(tx, ticket.id, { status: "pending" });
  if (await wantsNotification(tx, ticket.user_id, "support_ticket_reply", "email")) {
    await enqueueMail(tx, {
      to: ticket.user_email,
      kind: "support_ticket_reply",
      locale: ticket.user_language,
      params: { name: ticket.user_name, ticket: String(ticket.id), subject: ticket.subject, reply: input.body.slice(0, 2000) },
      link: input.link,
      userId: ticket.user_id,
    });
  }
  await notifyByPush(tx, { userId: ticket.user_id, kind: "support_ticket_reply", title: `Reply to ticket #${ticket.id}`, body: input.body.slice(0, 200), url: `/support-tickets/${ticket.id}` });
  return message;
}
