/**
 * The audit log: one append-only row per administrative change (who, what, before → after,
 * when). Rows are written in the transaction of the change they record, so a change and
 * its record commit together or not at all.
 */
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods } from "../db/pool.ts";

export const auditRow = z.object({
  id: z.number(),
  actor_id: z.number().nullable(),
  actor_name: z.string().nullable(),
  actor_username: z.string().nullable(),
  action: z.string(),
  subject_type: z.string(),
  subject_id: z.number().nullable(),
  before: z.unknown(),
  after: z.unknown(),
  created_at: z.date(),
});
export type AuditRow = z.infer<typeof auditRow>;

export interface AuditEntry {
  /** The administrator who made the change (null for the system). */
  actorId: number | null;
  /** `subject.verb`, e.g. `user.updated`. */
  action: string;
  subjectType: string;
  subjectId: number | null;
  /** What the changed fields held before (null for a creation). */
  before: Record<string, unknown> | null;
  /** What they hold after (null for a deletion). */
  after: Record<string, unknown> | null;
}

/** Appends one audit row. */
export async function insertAuditEntry(conn: CommonQueryMethods, entry: AuditEntry): Promise<void> {
  await conn.query(sql.type(ignoredRow)`
    insert into audit_log (actor_id, action, subject_type, subject_id, before, after)
    values (${entry.actorId}, ${entry.action}, ${entry.subjectType}, ${entry.subjectId},
      ${entry.before === null ? null : sql.jsonb(entry.before as never)}, ${entry.after === null ? null : sql.jsonb(entry.after as never)})`);
}

export interface AuditFilters {
  actorId?: number | undefined;
  subjectType?: string | undefined;
  subjectId?: number | undefined;
  action?: string | undefined;
}

/** One page of audit rows, newest first, and the total. */
export async function listAuditEntries(conn: CommonQueryMethods, filters: AuditFilters, limit: number, offset: number): Promise<{ rows: AuditRow[]; total: number }> {
  const where = [sql.fragment`true`];
  if (filters.actorId !== undefined) where.push(sql.fragment`a.actor_id = ${filters.actorId}`);
  if (filters.subjectType !== undefined) where.push(sql.fragment`a.subject_type = ${filters.subjectType}`);
  if (filters.subjectId !== undefined) where.push(sql.fragment`a.subject_id = ${filters.subjectId}`);
  if (filters.action !== undefined) where.push(sql.fragment`a.action = ${filters.action}`);
  const condition = sql.join(where, sql.fragment` and `);
  const [rows, total] = await Promise.all([
    conn.any(sql.type(auditRow)`
      select a.id, a.actor_id, u.name as actor_name, u.username as actor_username, a.action, a.subject_type, a.subject_id,
        a.before, a.after, a.created_at
      from audit_log a left join users u on u.id = a.actor_id
      where ${condition} order by a.created_at desc, a.id desc limit ${limit} offset ${offset}`),
    conn.oneFirst(sql.type(z.object({ count: z.number() }))`select count(*)::int as count from audit_log a where ${condition}`),
  ]);
  return { rows: [...rows], total };
}
