/**
 * Support tickets for site administrators: every ticket (filter by status and assignee),
 * read with internal notes, assign to an administrator, change status along
 * open → pending → resolved → closed (or back to open before closing), reply or note.
 */
import { z } from "zod";
import { insertAuditEntry } from "../../../shared/admin/auditLog.ts";
import { findUserById } from "../../../shared/db/users.ts";
import { conflict, invalidField, notFound } from "../../../shared/errors.ts";
import { replyToTicket } from "../../../shared/support/replies.ts";
import { findTicket, listMessages, listTickets, NEXT_STATUSES, updateTicket } from "../../../shared/support/store.ts";
import { currentUser, type AppContext } from "../../context.ts";
import { paginated, paginatedSchema } from "../../pagination.ts";
import { authorize } from "../../policies/authorize.ts";
import { hasRole, isSiteAdmin } from "../../policies/roles.ts";
import { presentTicket } from "../../presenters/supportTicket.ts";
import { defineRoute } from "../route.ts";
import { presentConversation, ticketFilesOf, writeWithFiles } from "./attachments.ts";
import { adminTicketListQuery, staffReplyBody, ticketMessageResource, ticketParams, ticketResource, updateTicketBody } from "./support.schema.ts";

const withMessages = z.object({ ticket: ticketResource.extend({ messages: z.array(ticketMessageResource) }) });
const adminOnly = (ctx: AppContext) => authorize(isSiteAdmin(currentUser(ctx)), "Only administrators may handle support tickets.");

const list = defineRoute({
  method: "get",
  path: "/admin/support-tickets",
  summary: "All support tickets, newest first (site administrators only)",
  tags: ["Admin"],
  auth: "bearer",
  query: adminTicketListQuery,
  responses: { 200: { description: "A page of tickets", schema: paginatedSchema(ticketResource) }, 403: { description: "Not an administrator" } },
  handler: async (ctx, { query }) => {
    adminOnly(ctx);
    const { rows, total } = await listTickets(ctx.deps.pool, { status: query.status, assignedTo: query.assigned_to }, query.per_page, (query.page - 1) * query.per_page);
    ctx.body = paginated(rows.map(presentTicket), total, query, new URL(ctx.href));
  },
});

const show = defineRoute({
  method: "get",
  path: "/admin/support-tickets/{id}",
  summary: "A ticket with its whole conversation, internal notes included",
  tags: ["Admin"],
  auth: "bearer",
  params: ticketParams,
  responses: { 200: { description: "The ticket", schema: withMessages }, 403: { description: "Not an administrator" } },
  handler: async (ctx, { params }) => {
    adminOnly(ctx);
    const ticket = await findTicket(ctx.deps.pool, params.id);
    if (!ticket) throw notFound("Support ticket");
    ctx.body = { ticket: { ...presentTicket(ticket), messages: await presentConversation(ctx.deps.pool, ctx.deps.config, await listMessages(ctx.deps.pool, ticket.id, true)) } };
  },
});

const update = defineRoute({
  method: "put",
  path: "/admin/support-tickets/{id}",
  summary: "Change a ticket's status or assignee (audited)",
  tags: ["Admin"],
  auth: "bearer",
  params: ticketParams,
  body: updateTicketBody,
  responses: {
    200: { description: "Updated", schema: z.object({ message: z.string(), ticket: ticketResource }) },
    403: { description: "Not an administrator" },
    409: { description: "The status cannot follow the current one (`invalid_transition`)" },
  },
  handler: async (ctx, { params, body }) => {
    adminOnly(ctx);
    const actor = currentUser(ctx);
    const ticket = await ctx.deps.pool.transaction(async (tx) => {
      const found = await findTicket(tx, params.id, true);
      if (!found) throw notFound("Support ticket");
      if (body.status !== undefined && body.status !== found.status && !NEXT_STATUSES[found.status].includes(body.status)) {
        throw conflict(`A ${found.status} ticket cannot become ${body.status}.`, "invalid_transition");
      }
      if (body.assigned_to != null) {
        const assignee = await findUserById(tx, body.assigned_to);
        if (!assignee || !hasRole(assignee, "admin") || assignee.disabled_at) throw invalidField("assigned_to", "Tickets can be assigned to administrators only.");
      }
      await updateTicket(tx, found.id, { status: body.status, assignedTo: body.assigned_to });
      const after = (await findTicket(tx, found.id))!;
      await insertAuditEntry(tx, {
        actorId: actor.id,
        action: "support_ticket.updated",
        subjectType: "support_ticket",
        subjectId: found.id,
        before: { status: found.status, assigned_to: found.assigned_to },
        after: { status: after.status, assigned_to: after.assigned_to },
      });
      return after;
    });
    ctx.body = { message: "Support ticket updated.", ticket: presentTicket(ticket) };
  },
});

const reply = defineRoute({
  method: "post",
  path: "/admin/support-tickets/{id}/replies",
  summary: "Reply to the user (e-mail and push as their settings allow) or add an internal note",
  tags: ["Admin"],
  auth: "bearer",
  params: ticketParams,
  body: staffReplyBody,
  bodyKind: "json-or-multipart",
  responses: {
    201: { description: "Added", schema: z.object({ message: z.string(), reply: ticketMessageResource }) },
    403: { description: "Not an administrator" },
    409: { description: "The ticket is closed (`ticket_closed`)" },
  },
  handler: async (ctx, { params, body }) => {
    adminOnly(ctx);
    const actor = currentUser(ctx);
    const isInternal = body.is_internal === true || body.is_internal === "true";
    const files = ticketFilesOf(body);
    if (!(await findTicket(ctx.deps.pool, params.id))) throw notFound("Support ticket");
    const message = await writeWithFiles(ctx, actor.id, files, async (tx, attach) => {
      const ticket = await findTicket(tx, params.id, true);
      if (!ticket) throw notFound("Support ticket");
      const message = await replyToTicket(tx, { ticket, authorId: actor.id, body: body.body, fromStaff: true, isInternal, link: `${ctx.deps.config.frontendUrl}/support-tickets/${ticket.id}` });
      await attach(message.id);
      return message;
    });
    ctx.status = 201;
    ctx.body = { message: isInternal ? "Internal note added." : "Reply sent.", reply: (await presentConversation(ctx.deps.pool, ctx.deps.config, [message]))[0] };
  },
});

export const adminSupportTicketRoutes = [list, show, update, reply];
