/**
 * The seller gate of the store: only users with a complete seller profile (`is_seller`, a
 * payout method and a valid IBAN, PUT /profile/seller) may list templates or ask for payouts.
 */
import { z } from "zod";
import { openText } from "../crypto.ts";
import { sql, type CommonQueryMethods } from "../db/pool.ts";
import { AppError } from "../errors.ts";
import { isValidIban } from "../iban.ts";

const sellerRow = z.object({
  is_seller: z.boolean(),
  payout_method: z.string().nullable(),
  bank_iban: z.instanceof(Buffer).nullable(),
  bank_account_holder: z.string().nullable(),
  name: z.string(),
});

/** The seller's payout details (IBAN opened). @throws 403 `seller_profile_incomplete` */
export async function requireSeller(conn: CommonQueryMethods, appKey: Buffer, userId: number): Promise<{ iban: string; holder: string }> {
  const row = await conn.one(sql.type(sellerRow)`
    select is_seller, payout_method, bank_iban, bank_account_holder, name from users where id = ${userId}`);
  let iban: string | null;
  try {
    iban = row.bank_iban ? openText(appKey, row.bank_iban) : null;
  } catch {
    iban = null;
  }
  if (!row.is_seller || !row.payout_method || !iban || !isValidIban(iban)) {
    throw new AppError(
      403,
      "seller_profile_incomplete",
      "Complete your seller profile first (PUT /profile/seller: is_seller, a payout method and a valid IBAN).",
    );
  }
  return { iban, holder: row.bank_account_holder || row.name };
}

/** The user's stored IBAN when it opens and is valid, else null (none, cleared, or unreadable). */
export async function payoutIban(conn: CommonQueryMethods, appKey: Buffer, userId: number): Promise<string | null> {
  const sealed = await conn.maybeOneFirst(sql.type(z.object({ bank_iban: z.instanceof(Buffer).nullable() }))`
    select bank_iban from users where id = ${userId}`);
  if (!sealed) return null;
  try {
    const iban = openText(appKey, sealed);
    return isValidIban(iban) ? iban : null;
  } catch {
    return null;
  }
}
