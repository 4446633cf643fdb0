/**
 * Credit ledger entries as clients see them.
 */
import { z } from "zod";
import type { LedgerEntryRow } from "../../shared/credits/store.ts";

export const ledgerEntryResource = z.object({
  id: z.number(),
  amount: z.number(),
  balance_after: z.number(),
  reason: z.string(),
  reference_type: z.string().nullable(),
  reference_id: z.string().nullable(),
  created_at: z.string(),
});

/** A ledger entry; amount is signed (+ in, - out). */
export function presentLedgerEntry(row: LedgerEntryRow): z.infer<typeof ledgerEntryResource> {
  return {
    id: row.id,
    amount: row.amount,
    balance_after: row.balance_after,
    reason: row.reason,
    reference_type: row.reference_type,
    reference_id: row.reference_id,
    created_at: row.created_at.toISOString(),
  };
}
