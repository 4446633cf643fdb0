/**
 * An audit log row as administrators read it.
 */
import { z } from "zod";
import type { AuditRow } from "../../shared/admin/auditLog.ts";

const jsonObject = z.record(z.string(), z.unknown()).nullable();

export const auditEntryResource = z.object({
  id: z.number(),
  actor: z.object({ id: z.number(), name: z.string(), username: z.string() }).nullable(),
  action: z.string(),
  subject_type: z.string(),
  subject_id: z.number().nullable(),
  before: jsonObject,
  after: jsonObject,
  created_at: z.string(),
});

export function presentAuditEntry(row: AuditRow): z.infer<typeof auditEntryResource> {
  return {
    id: row.id,
    actor: row.actor_id !== null && row.actor_name !== null && row.actor_username !== null ? { id: row.actor_id, name: row.actor_name, username: row.actor_username } : null,
    action: row.action,
    subject_type: row.subject_type,
    subject_id: row.subject_id,
    before: (row.before ?? null) as Record<string, unknown> | null,
    after: (row.after ?? null) as Record<string, unknown> | null,
    created_at: row.created_at.toISOString(),
  };
}
