/**
 * Reads of the credits area: an account's balance and its ledger, newest first.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";

export const ledgerEntryRow = z.object({
  id: z.number(),
  amount: z.number(),
  balance_after: z.number(),
  reason: z.string(),
  reference_type: z.string().nullable(),
  reference_id: z.string().nullable(),
  created_at: z.date(),
});
export type LedgerEntryRow = z.infer<typeof ledgerEntryRow>;

const accountRow = z.object({ balance: z.number(), shortfall: z.number() });

/** The user's balance and open refund shortfall (both 0 for a user who never held credits). */
export async function findCreditAccount(conn: CommonQueryMethods, userId: number): Promise<z.infer<typeof accountRow>> {
  const row = await conn.maybeOne(sql.type(accountRow)`select balance, shortfall from credit_accounts where user_id = ${userId}`);
  return row ?? { balance: 0, shortfall: 0 };
}

/** One page of the user's ledger, newest first, with the total count. */
export async function listLedger(conn: CommonQueryMethods, userId: number, page: { limit: number; offset: number }): Promise<{ rows: readonly LedgerEntryRow[]; total: number }> {
  const [rows, total] = await Promise.all([
    conn.any(sql.type(ledgerEntryRow)`
      select id, amount, balance_after, reason, reference_type, reference_id, created_at from credit_ledger
      where user_id = ${userId} order by id desc limit ${page.limit} offset ${page.offset}`),
    conn.oneFirst(sql.type(z.object({ count: z.number() }))`select count(*)::int as count from credit_ledger where user_id = ${userId}`),
  ]);
  return { rows, total };
}
