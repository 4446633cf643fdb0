/**
 * Pending team invitations addressed to an e-mail. Teams and their invitations are built
 * with the projects area; until its migration creates `team_invitations`, nobody has one.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";

export async function hasPendingInvitation(conn: CommonQueryMethods, email: string): Promise<boolean> {
  const table = await conn.oneFirst(sql.type(z.object({ t: z.string().nullable() }))`select to_regclass('team_invitations')::text as t`);
  if (!table) return false;
  return conn.exists(sql.type(z.object({}))`
    select 1 from team_invitations where lower(email) = lower(${email}) and accepted_at is null and expires_at > now()`);
}
