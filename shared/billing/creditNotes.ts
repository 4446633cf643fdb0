/**
 * Credit notes: the paper trail of a refund of an invoiced payment. An invoice is never
 * changed; each step of a payment's refunded running total (shared/payments/refunds.ts) gets
 * one credit note, numbered per year without gaps (`CN-2026-000001`), naming the invoice it
 * corrects, with the buyer as on that invoice and the amount split at the invoice's VAT rate.
 * The split is of running totals (net of the total refunded so far, less net of the total
 * before), so the credit notes of a payment refunded in steps add up to its invoice exactly.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";
import { invoiceColumns, invoiceRow, type InvoiceRow } from "./invoices.ts";

/** Net cents of `refundedCents` out of `invoice`, at its rate (all of it: the invoice's own net). */
function netOf(invoice: InvoiceRow, refundedCents: number): number {
  if (refundedCents >= invoice.total_cents) return invoice.net_cents;
  return Math.round((refundedCents * 100) / (100 + invoice.vat_rate));
}

/**
 * Issues the credit note of a refund of transaction `transactionId` that took its refunded
 * total from `fromCents` to `toCents` (in the caller's transaction, which applies the
 * refund). Nothing for a payment without an invoice (refunded before it was invoiced, or
 * never delivered) or for a step already noted. Returns the credit note's id, or null.
 */
export async function issueCreditNote(tx: CommonQueryMethods, transactionId: number, fromCents: number, toCents: number): Promise<number | null> {
  const invoice = await tx.maybeOne(sql.type(invoiceRow)`
    select ${invoiceColumns} from invoices where transaction_id = ${transactionId}`);
  if (!invoice) return null;
  const to = Math.min(toCents, invoice.total_cents);
  if (to <= fromCents) return null;
  const total = to - fromCents;
  const net = netOf(invoice, to) - netOf(invoice, fromCents);
  const described = invoice.lines.map((line) => line.description).join(", ");
  const lines: InvoiceRow["lines"] = [{ description: `Refund: ${described} (invoice ${invoice.number})`, quantity: 1, unit_cents: total, total_cents: total }];
  const year = await tx.oneFirst(sql.type(z.object({ year: z.number() }))`select extract(year from now() at time zone 'UTC')::int as year`);
  // The unique step key makes a replayed step a no-op; the counter is taken only for a new one.
  const taken = await tx.exists(sql.type(z.object({ one: z.number() }))`
    select 1 as one from credit_notes where invoice_id = ${invoice.id} and (refunded_to_cents = ${to} or refunded_from_cents = ${fromCents})`);
  if (taken) return null;
  const seq = await tx.oneFirst(sql.type(z.object({ n: z.number() }))`
    insert into credit_note_counters (year, last_number) values (${year}, 1)
    on conflict (year) do update set last_number = credit_note_counters.last_number + 1 returning last_number as n`);
  return tx.oneFirst(sql.type(z.object({ id: z.number() }))`
    insert into credit_notes (number, user_id, invoice_id, transaction_id, issued_at, refunded_from_cents, refunded_to_cents, buyer, lines,
      currency, net_cents, vat_rate, vat_cents, total_cents)
    values (${`CN-${year}-${String(seq).padStart(6, "0")}`}, ${invoice.user_id}, ${invoice.id}, ${transactionId}, now(), ${fromCents}, ${to},
      ${sql.jsonb(invoice.buyer)}, ${sql.jsonb(lines)}, ${invoice.currency}, ${net}, ${invoice.vat_rate}, ${total - net}, ${total})
    returning id`);
}
