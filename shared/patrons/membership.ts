/**
 * Patron membership as other areas read it: whether a user is a patron now, and at which
 * level. Features that are "a patron feature" (kanban comment attachments, the form
 * designer) ask `isPatron` and nothing else, so how membership is bought and renewed
 * (the commerce area) can change without touching them.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";

export const patronStatusRow = z.object({
  level: z.number(),
  started_at: z.date(),
  expires_at: z.date(),
  cancelled_at: z.date().nullable(),
});
export type PatronStatus = z.infer<typeof patronStatusRow>;

/**
 * The membership period covering `at` (default: the database's now), the highest level
 * first when periods overlap; null when the user is not a patron then.
 */
export async function currentPatronPeriod(conn: CommonQueryMethods, userId: number, at?: Date): Promise<PatronStatus | null> {
  const instant = at ? sql.fragment`${at.toISOString()}::timestamptz` : sql.fragment`now()`;
  return conn.maybeOne(sql.type(patronStatusRow)`
    select level, started_at, expires_at, cancelled_at from patron_memberships
    where user_id = ${userId} and started_at <= ${instant} and expires_at > ${instant}
    order by level desc, expires_at desc
    limit 1`);
}

/** Whether `userId` is a patron at `at` (default now). */
export async function isPatron(conn: CommonQueryMethods, userId: number, at?: Date): Promise<boolean> {
  return (await currentPatronPeriod(conn, userId, at)) !== null;
}
