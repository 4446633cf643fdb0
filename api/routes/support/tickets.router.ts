/**
 * A user's own support tickets: create, list, read with the conversation (no internal
 * notes), reply, close. Someone else's ticket is not found.
 */
import { z } from "zod";
import { notFound } from "../../../shared/errors.ts";
import { replyToTicket } from "../../../shared/support/replies.ts";
import { findTicket, insertTicket, listMessages, listTickets, updateTicket, type TicketRow } from "../../../shared/support/store.ts";
import { currentUser, type AppContext } from "../../context.ts";
import { paginated, paginatedSchema } from "../../pagination.ts";
import { presentTicket } from "../../presenters/supportTicket.ts";
import { defineRoute } from "../route.ts";
import { presentConversation, ticketFilesOf, writeWithFiles } from "./attachments.ts";
import { createTicketBody, replyBody, ticketListQuery, ticketMessageResource, ticketParams, ticketResource } from "./support.schema.ts";

const withMessages = z.object({ ticket: ticketResource.extend({ messages: z.array(ticketMessageResource) }) });

/** The caller's ticket `id` (404 for anyone else's). */
async function ownTicket(ctx: AppContext, conn: Parameters<typeof findTicket>[0], id: number, lock = false): Promise<TicketRow> {
  const ticket = await findTicket(conn, id, lock);
  if (!ticket || ticket.user_id !== currentUser(ctx).id) throw notFound("Support ticket");
  return ticket;
}

const create = defineRoute({
  method: "post",
  path: "/support-tickets",
  summary: "Open a support ticket (JSON, or multipart with `attachments[i]` files)",
  tags: ["Support"],
  auth: "bearer",
  body: createTicketBody,
  bodyKind: "json-or-multipart",
  responses: { 201: { description: "Opened", schema: z.object({ message: z.string() }).extend(withMessages.shape) } },
  handler: async (ctx, { body }) => {
    const me = currentUser(ctx);
    const files = ticketFilesOf(body);
    const { ticket, messages } = await writeWithFiles(ctx, me.id, files, async (tx, attach) => {
      const id = await insertTicket(tx, { userId: me.id, subject: body.subject, body: body.body, category: body.category, priority: body.priority });
      const messages = await listMessages(tx, id, false);
      await attach(messages[0]!.id);
      return { ticket: (await findTicket(tx, id))!, messages };
    });
    ctx.status = 201;
    ctx.body = { message: "Support ticket opened.", ticket: { ...presentTicket(ticket), messages: await presentConversation(ctx.deps.pool, ctx.deps.config, messages) } };
  },
});

const list = defineRoute({
  method: "get",
  path: "/support-tickets",
  summary: "The caller's support tickets, newest first",
  tags: ["Support"],
  auth: "bearer",
  query: ticketListQuery,
  responses: { 200: { description: "A page of tickets", schema: paginatedSchema(ticketResource) } },
  handler: async (ctx, { query }) => {
    const { rows, total } = await listTickets(ctx.deps.pool, { userId: currentUser(ctx).id, status: query.status }, query.per_page, (query.page - 1) * query.per_page);
    ctx.body = paginated(rows.map(presentTicket), total, query, new URL(ctx.href));
  },
});

const show = defineRoute({
  method: "get",
  path: "/support-tickets/{id}",
  summary: "One of the caller's tickets with its conversation",
  tags: ["Support"],
  auth: "bearer",
  params: ticketParams,
  responses: { 200: { description: "The ticket", schema: withMessages } },
  handler: async (ctx, { params }) => {
    const ticket = await ownTicket(ctx, ctx.deps.pool, params.id);
    const messages = await listMessages(ctx.deps.pool, ticket.id, false);
    ctx.body = { ticket: { ...presentTicket(ticket), messages: await presentConversation(ctx.deps.pool, ctx.deps.config, messages) } };
  },
});

const reply = defineRoute({
  method: "post",
  path: "/support-tickets/{id}/replies",
  summary: "Reply on one of the caller's tickets (reopens one waiting for the caller); JSON, or multipart with `attachments[i]` files",
  tags: ["Support"],
  auth: "bearer",
  params: ticketParams,
  body: replyBody,
  bodyKind: "json-or-multipart",
  responses: { 201: { description: "Added", schema: z.object({ message: z.string(), reply: ticketMessageResource }) }, 409: { description: "The ticket is closed (`ticket_closed`)" } },
  handler: async (ctx, { params, body }) => {
    const me = currentUser(ctx);
    const files = ticketFilesOf(body);
    // Someone else's ticket stores nothing.
    await ownTicket(ctx, ctx.deps.pool, params.id);
    const message = await writeWithFiles(ctx, me.id, files, async (tx, attach) => {
      const ticket = await ownTicket(ctx, tx, params.id, true);
      const message = await replyToTicket(tx, { ticket, authorId: me.id, body: body.body, fromStaff: false, isInternal: false, link: `${ctx.deps.config.frontendUrl}/support-tickets/${ticket.id}` });
      await attach(message.id);
      return message;
    });
    ctx.status = 201;
    ctx.body = { message: "Reply added.", reply: (await presentConversation(ctx.deps.pool, ctx.deps.config, [message]))[0] };
  },
});

const close = defineRoute({
  method: "post",
  path: "/support-tickets/{id}/close",
  summary: "Close one of the caller's tickets",
  tags: ["Support"],
  auth: "bearer",
  params: ticketParams,
  responses: { 200: { description: "Closed", schema: z.object({ message: z.string(), ticket: ticketResource }) } },
  handler: async (ctx, { params }) => {
    const ticket = await ctx.deps.pool.transaction(async (tx) => {
      const found = await ownTicket(ctx, tx, params.id, true);
      if (found.status !== "closed") await updateTicket(tx, found.id, { status: "closed" });
      return (await findTicket(tx, found.id))!;
    });
    ctx.body = { message: "Support ticket closed.", ticket: presentTicket(ticket) };
  },
});

export const supportTicketRoutes = [create, list, show, reply, close];
