/**
 * Invoices for succeeded payments: numbered per year without gaps (`INV-2026-000001`),
 * lines from the transaction, VAT at the standard rate of the buyer's country when their
 * profile names one (prices include VAT; without a country no VAT is shown).
 */
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods } from "../db/pool.ts";
import type { TransactionRow } from "../payments/store.ts";

/** Standard VAT rates (percent) of the EU member states. */
export const vatRates: Record<string, number> = {
  AT: 20, BE: 21, BG: 20, CY: 19, CZ: 21, DE: 19, DK: 25, EE: 22, ES: 21, FI: 25.5, FR: 20, GR: 24, HR: 25, HU: 27,
  IE: 23, IT: 22, LT: 21, LU: 17, LV: 21, MT: 18, NL: 21, PL: 23, PT: 23, RO: 19, SE: 25, SI: 22, SK: 23,
};

export const invoiceLine = z.object({ description: z.string(), quantity: z.number(), unit_cents: z.number(), total_cents: z.number() });
export const invoiceRow = z.object({
  id: z.number(),
  number: z.string(),
  user_id: z.number(),
  transaction_id: z.number(),
  issued_at: z.date(),
  buyer: z.object({ name: z.string(), email: z.string(), company: z.string().nullable(), address: z.string().nullable(), country: z.string().nullable(), vat_id: z.string().nullable() }),
  lines: z.array(invoiceLine),
  currency: z.string(),
  net_cents: z.number(),
  vat_rate: z.number(),
  vat_cents: z.number(),
  total_cents: z.number(),
});
export type InvoiceRow = z.infer<typeof invoiceRow>;
export const invoiceColumns = sql.fragment`id, number, user_id, transaction_id, issued_at, buyer, lines, currency, net_cents, vat_rate, vat_cents, total_cents`;

const buyerRow = z.object({ name: z.string(), email: z.string(), company: z.string().nullable(), address: z.string().nullable(), country: z.string().nullable(), vat_id: z.string().nullable() });

function describe(transaction: TransactionRow): string {
  if (transaction.kind === "credit_package") return `${transaction.credits} credits`;
  if (transaction.kind === "subscription") return "Project subscription";
  if (transaction.kind === "patron") return "Patron membership";
  return "Template purchase";
}

/** Issues the invoice of a succeeded transaction, once (in the caller's transaction). */
export async function issueInvoice(tx: CommonQueryMethods, transaction: TransactionRow): Promise<void> {
  const existing = await tx.maybeOneFirst(sql.type(z.object({ id: z.number() }))`select id from invoices where transaction_id = ${transaction.id}`);
  if (existing !== null) return;
  const buyer = await tx.one(sql.type(buyerRow)`
    select name, email, company_name as company, company_address as address, company_country as country, vat_id from users where id = ${transaction.user_id}`);
  const rate = buyer.country ? (vatRates[buyer.country] ?? 0) : 0;
  const total = transaction.amount_cents;
  const net = Math.round((total * 100) / (100 + rate));
  const year = new Date().getUTCFullYear();
  const seq = await tx.oneFirst(sql.type(z.object({ n: z.number() }))`
    insert into invoice_counters (year, last_number) values (${year}, 1)
    on conflict (year) do update set last_number = invoice_counters.last_number + 1 returning last_number as n`);
  const lines = [{ description: describe(transaction), quantity: 1, unit_cents: total, total_cents: total }];
  await tx.query(sql.type(ignoredRow)`
    insert into invoices (number, user_id, transaction_id, buyer, lines, currency, net_cents, vat_rate, vat_cents, total_cents)
    values (${`INV-${year}-${String(seq).padStart(6, "0")}`}, ${transaction.user_id}, ${transaction.id}, ${sql.jsonb(buyer)}, ${sql.jsonb(lines)},
      ${transaction.currency}, ${net}, ${rate}, ${total - net}, ${total})`);
}
