/**
 * PUT /profile/seller: the seller profile of the marketplace (company, VAT id, payout by
 * bank transfer). The IBAN is validated, stored encrypted and never returned. Changing the
 * payout account (IBAN or holder) of an account that has one, or has earned, needs the
 * current password (and second factor): it decides where the seller's money goes, and a
 * bearer token alone may be stolen.
 */
import { z } from "zod";
import { reauthenticate } from "../../../shared/auth/reauthenticate.ts";
import { openText, seal } from "../../../shared/crypto.ts";
import { ignoredRow, sql } from "../../../shared/db/pool.ts";
import { findUserById } from "../../../shared/db/users.ts";
import { invalid } from "../../../shared/errors.ts";
import { currentUser } from "../../context.ts";
import { presentUser, userResource } from "../../presenters/user.ts";
import { defineRoute } from "../route.ts";
import { sellerBody } from "./profile.schema.ts";

/** The stored IBAN in clear, or null (none, or unreadable under the current key). */
function openStoredIban(appKey: Buffer, sealed: Buffer | null): string | null {
  if (!sealed) return null;
  try {
    return openText(appKey, sealed);
  } catch {
    return null;
  }
}

const seller = defineRoute({
  method: "put",
  path: "/profile/seller",
  summary: "Update the seller profile",
  description:
    "Company details and the payout account (`payout_method` `bank_transfer`, `bank_iban`, `bank_account_holder`). Once the account has an IBAN, or has earned from sales, a change of the IBAN or the account holder needs `current_password` (and `two_factor_code` when the account uses two-factor authentication), checked like a login (422 on the field otherwise).",
  tags: ["Account"],
  auth: "bearer",
  body: sellerBody,
  responses: { 200: { description: "Updated", schema: z.object({ message: z.string(), user: userResource }) } },
  handler: async (ctx, { body }) => {
    const { pool, config, identity } = ctx.deps;
    const me = currentUser(ctx);
    const userId = me.id;
    const stored = await pool.one(sql.type(z.object({ has_iban: z.boolean(), iban: z.instanceof(Buffer).nullable(), holder: z.string().nullable(), has_earned: z.boolean() }))`
      select bank_iban is not null as has_iban, bank_iban as iban, bank_account_holder as holder,
        exists (select 1 from seller_earnings e where e.seller_id = users.id) as has_earned
      from users where id = ${userId}`);
    const storedIban = openStoredIban(config.appKey, stored.iban);
    const redirects =
      (typeof body.bank_iban === "string" && body.bank_iban !== storedIban) ||
      (typeof body.bank_account_holder === "string" && body.bank_account_holder !== stored.holder);
    if (redirects && (stored.has_iban || stored.has_earned)) {
      await reauthenticate({ pool, attempts: identity.attempts, appKey: config.appKey }, me, ctx.ip, {
        password: body.current_password,
        passwordField: "current_password",
        code: body.two_factor_code,
        codeField: "two_factor_code",
      });
    }
    if (body.is_seller && (body.payout_method ?? "bank_transfer") === "bank_transfer") {
      const errors: Record<string, string[]> = {};
      if (body.bank_iban === undefined && !stored.has_iban) errors.bank_iban = ["The bank iban field is required for bank transfers."];
      if (body.bank_account_holder === undefined && !stored.holder) errors.bank_account_holder = ["The bank account holder field is required for bank transfers."];
      if (Object.keys(errors).length) throw invalid(errors);
    }
    const sets = [sql.fragment`is_seller = ${body.is_seller}`, sql.fragment`updated_at = now()`];
    const text = { company_name: body.company_name, company_address: body.company_address, company_country: body.company_country, vat_id: body.vat_id, bank_account_holder: body.bank_account_holder };
    for (const [column, value] of Object.entries(text)) {
      if (value !== undefined) sets.push(sql.fragment`${sql.identifier([column])} = ${value}`);
    }
    if (body.payout_method !== undefined) sets.push(sql.fragment`payout_method = ${body.payout_method}`);
    else if (body.is_seller) sets.push(sql.fragment`payout_method = coalesce(payout_method, 'bank_transfer')`);
    if (body.bank_iban !== undefined) {
      sets.push(body.bank_iban === null ? sql.fragment`bank_iban = null` : sql.fragment`bank_iban = ${sql.binary(seal(config.appKey, body.bank_iban))}`);
    }
    await pool.query(sql.type(ignoredRow)`update users set ${sql.join(sets, sql.fragment`, `)} where id = ${userId}`);
    const user = await findUserById(pool, userId);
    ctx.body = { message: "Seller profile updated.", user: presentUser(user!) };
  },
});

export const sellerRoutes = [seller];
