/**
 * SQL of support tickets and their conversations.
 */
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods } from "../db/pool.ts";

export const TICKET_CATEGORIES = ["general", "account", "billing", "technical", "bug", "feature_request"] as const;
export const TICKET_PRIORITIES = ["low", "normal", "high", "urgent"] as const;
export const TICKET_STATUSES = ["open", "pending", "resolved", "closed"] as const;
export type TicketStatus = (typeof TICKET_STATUSES)[number];

/** Which status may follow which: forward along open → pending → resolved → closed, back to open before closing. */
export const NEXT_STATUSES: Record<TicketStatus, readonly TicketStatus[]> = {
  open: ["pending", "resolved", "closed"],
  pending: ["open", "resolved", "closed"],
  resolved: ["open", "closed"],
  closed: [],
};

export const ticketRow = z.object({
  id: z.number(),
  user_id: z.number(),
  user_name: z.string(),
  user_email: z.string(),
  user_language: z.string(),
  subject: z.string(),
  category: z.string(),
  priority: z.string(),
  status: z.enum(TICKET_STATUSES),
  assigned_to: z.number().nullable(),
  created_at: z.date(),
  updated_at: z.date(),
  closed_at: z.date().nullable(),
});
export type TicketRow = z.infer<typeof ticketRow>;

export const messageRow = z.object({
  id: z.number(),
  author_id: z.number().nullable(),
  author_name: z.string().nullable(),
  body: z.string(),
  is_internal: z.boolean(),
  from_staff: z.boolean(),
  created_at: z.date(),
});
export type MessageRow = z.infer<typeof messageRow>;

const ticketColumns = sql.fragment`t.id, t.user_id, u.name as user_name, u.email as user_email, u.language as user_language,
  t.subject, t.category, t.priority, t.status, t.assigned_to, t.created_at, t.updated_at, t.closed_at`;

export async function insertTicket(conn: CommonQueryMethods, input: { userId: number; subject: string; category: string; priority: string; body: string }): Promise<number> {
  const id = await conn.oneFirst(sql.type(z.object({ id: z.number() }))`
    insert into support_tickets (user_id, subject, category, priority) values (${input.userId}, ${input.subject}, ${input.category}, ${input.priority}) returning id`);
  await insertMessage(conn, { ticketId: id, authorId: input.userId, body: input.body, isInternal: false, fromStaff: false });
  return id;
}

/** The ticket `id`, optionally locked for update. */
export async function findTicket(conn: CommonQueryMethods, id: number, lock = false): Promise<TicketRow | null> {
  return conn.maybeOne(sql.type(ticketRow)`
    select ${ticketColumns} from support_tickets t join users u on u.id = t.user_id where t.id = ${id} ${lock ? sql.fragment`for update of t` : sql.fragment``}`);
}

export interface TicketFilters {
  userId?: number | undefined;
  status?: string | undefined;
  assignedTo?: number | undefined;
}

export async function listTickets(conn: CommonQueryMethods, filters: TicketFilters, limit: number, offset: number): Promise<{ rows: TicketRow[]; total: number }> {
  const where = [sql.fragment`true`];
  if (filters.userId !== undefined) where.push(sql.fragment`t.user_id = ${filters.userId}`);
  if (filters.status !== undefined) where.push(sql.fragment`t.status = ${filters.status}`);
  if (filters.assignedTo !== undefined) where.push(sql.fragment`t.assigned_to = ${filters.assignedTo}`);
  const condition = sql.join(where, sql.fragment` and `);
  const [rows, total] = await Promise.all([
    conn.any(sql.type(ticketRow)`select ${ticketColumns} from support_tickets t join users u on u.id = t.user_id where ${condition} order by t.id desc limit ${limit} offset ${offset}`),
    conn.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from support_tickets t where ${condition}`),
  ]);
  return { rows: [...rows], total };
}

export async function insertMessage(conn: CommonQueryMethods, input: { ticketId: number; authorId: number; body: string; isInternal: boolean; fromStaff: boolean }): Promise<MessageRow> {
  const id = await conn.oneFirst(sql.type(z.object({ id: z.number() }))`
    insert into support_ticket_messages (ticket_id, author_id, body, is_internal, from_staff)
    values (${input.ticketId}, ${input.authorId}, ${input.body}, ${input.isInternal}, ${input.fromStaff}) returning id`);
  await conn.query(sql.type(ignoredRow)`update support_tickets set updated_at = now() where id = ${input.ticketId}`);
  return conn.one(sql.type(messageRow)`
    select m.id, m.author_id, a.name as author_name, m.body, m.is_internal, m.from_staff, m.created_at
    from support_ticket_messages m left join users a on a.id = m.author_id where m.id = ${id}`);
}

/** The conversation of a ticket, oldest first; internal notes only when `withInternal`. */
export async function listMessages(conn: CommonQueryMethods, ticketId: number, withInternal: boolean): Promise<MessageRow[]> {
  const rows = await conn.any(sql.type(messageRow)`
    select m.id, m.author_id, a.name as author_name, m.body, m.is_internal, m.from_staff, m.created_at
    from support_ticket_messages m left join users a on a.id = m.author_id
    where m.ticket_id = ${ticketId} ${withInternal ? sql.fragment`` : sql.fragment`and not m.is_internal`} order by m.id`);
  return [...rows];
}

export async function updateTicket(conn: CommonQueryMethods, id: number, changes: { status?: TicketStatus | undefined; assignedTo?: number | null | undefined }): Promise<void> {
  const sets = [sql.fragment`updated_at = now()`];
  if (changes.status !== undefined) {
    sets.push(sql.fragment`status = ${changes.status}`);
    sets.push(changes.status === "closed" ? sql.fragment`closed_at = now()` : sql.fragment`closed_at = null`);
  }
  if (changes.assignedTo !== undefined) sets.push(sql.fragment`assigned_to = ${changes.assignedTo}`);
  await conn.query(sql.type(ignoredRow)`update support_tickets set ${sql.join(sets, sql.fragment`, `)} where id = ${id}`);
}
