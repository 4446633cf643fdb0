import { z } from "zod";
import { TICKET_CATEGORIES, TICKET_PRIORITIES, TICKET_STATUSES } from "../../../shared/support/store.ts";
import { paginationQuery } from "../../pagination.ts";
import { attachmentResource } from "../../presenters/attachment.ts";
import { idNumber } from "../../../shared/canonicalNumbers.ts";

const id = z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER);
export const ticketParams = z.object({ id });

/** DESIGN §14: `{subject, body, category, priority}`. */
export const createTicketBody = z
  .object({
    subject: z.string().trim().min(1).max(200),
    body: z.string().trim().min(1).max(10_000),
    category: z.enum(TICKET_CATEGORIES).default("general"),
    priority: z.enum(TICKET_PRIORITIES).default("normal"),
  })
  .loose();

/** JSON `{body}`, or multipart with `attachments[i]` files besides. */
export const replyBody = z.object({ body: z.string().trim().min(1).max(10_000) }).loose();
/** `is_internal` as a JSON boolean or, in a multipart form, `"true"`/`"false"`. */
export const staffReplyBody = replyBody.extend({ is_internal: z.union([z.boolean(), z.enum(["true", "false"])]).default(false) }).loose();

export const updateTicketBody = z.object({ status: z.enum(TICKET_STATUSES).optional(), assigned_to: idNumber().nullable().optional() });

export const ticketListQuery = paginationQuery.extend({ status: z.enum(TICKET_STATUSES).optional() });
export const adminTicketListQuery = ticketListQuery.extend({ assigned_to: idNumber().optional() });

export const ticketMessageResource = z.object({
  id: z.number(),
  author: z.object({ id: z.number(), name: z.string() }).nullable(),
  body: z.string(),
  from_staff: z.boolean(),
  is_internal: z.boolean(),
  created_at: z.string(),
  attachments: z.array(attachmentResource),
});

export const ticketResource = z.object({
  id: z.number(),
  subject: z.string(),
  category: z.string(),
  priority: z.string(),
  status: z.string(),
  user: z.object({ id: z.number(), name: z.string() }),
  assigned_to: z.number().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  closed_at: z.string().nullable(),
});
