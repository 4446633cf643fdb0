/**
 * Support tickets and their messages as clients see them (internal notes are filtered out
 * before presenting, for users).
 */
import type { MessageRow, TicketRow } from "../../shared/support/store.ts";

export const presentTicket = (t: TicketRow) => ({
  id: t.id,
  subject: t.subject,
  category: t.category,
  priority: t.priority,
  status: t.status,
  user: { id: t.user_id, name: t.user_name },
  assigned_to: t.assigned_to,
  created_at: t.created_at.toISOString(),
  updated_at: t.updated_at.toISOString(),
  closed_at: t.closed_at?.toISOString() ?? null,
});

export const presentTicketMessage = (m: MessageRow) => ({
  id: m.id,
  author: m.author_id !== null && m.author_name !== null ? { id: m.author_id, name: m.author_name } : null,
  body: m.body,
  from_staff: m.from_staff,
  is_internal: m.is_internal,
  created_at: m.created_at.toISOString(),
});
