/**
 * PUT /profile/seller: the seller profile of the marketplace (company, VAT id, payout by
 * bank transfer). The IBAN is validated, stored encrypted and never returned.
 */
import { z } from "zod";
import { seal } from "../../../shared/crypto.ts";
import { ignoredRow, sql } from "../../../shared/db/pool.ts";
import { findUserById } from "../../../shared/db/users.ts";
import { invalid } from "../../../shared/errors.ts";
import { currentUser } from "../../context.ts";
import { presentUser, userResource } from "../../presenters/user.ts";
import { defineRoute } from "../route.ts";
import { sellerBody } from "./profile.schema.ts";

const seller = defineRoute({
  method: "put",
  path: "/profile/seller",
  summary: "Update the seller profile",
  tags: ["Account"],
  auth: "bearer",
  body: sellerBody,
  responses: { 200: { description: "Updated", schema: z.object({ message: z.string(), user: userResource }) } },
  handler: async (ctx, { body }) => {
    const { pool, config } = ctx.deps;
    const userId = currentUser(ctx).id;
    const stored = await pool.one(sql.type(z.object({ has_iban: z.boolean(), holder: z.string().nullable() }))`
      select bank_iban is not null as has_iban, bank_account_holder as holder from users where id = ${userId}`);
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
