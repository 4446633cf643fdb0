/**
 * The billing documents a user reads at `GET /billing/invoices[/{id}[/pdf]]`: invoices and the
 * credit notes that correct them, in one list (one id space: credit notes draw their ids from
 * the invoices' sequence).
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";
import { invoiceColumns, invoiceRow } from "./invoices.ts";

export const billingDocumentRow = invoiceRow.extend({
  kind: z.enum(["invoice", "credit_note"]),
  /** The corrected invoice of a credit note; null for an invoice. */
  invoice_id: z.number().nullable(),
  invoice_number: z.string().nullable(),
});
export type BillingDocumentRow = z.infer<typeof billingDocumentRow>;

const documents = (where: ReturnType<typeof sql.fragment>) => sql.fragment`(
  select 'invoice' as kind, ${invoiceColumns}, null::bigint as invoice_id, null::text as invoice_number from invoices ${where}
  union all
  select 'credit_note', ${invoiceColumns}, invoice_id, (select i.number from invoices i where i.id = c.invoice_id) from credit_notes c ${where}
)`;
const columns = sql.fragment`kind, id, number, user_id, transaction_id, issued_at, buyer, lines, currency, net_cents, vat_rate, vat_cents, total_cents, invoice_id, invoice_number`;

/** A page of the user's invoices and credit notes, newest first, and their count. */
export async function listBillingDocuments(conn: CommonQueryMethods, userId: number, page: { limit: number; offset: number }) {
  const mine = documents(sql.fragment`where user_id = ${userId}`);
  const [rows, total] = await Promise.all([
    conn.any(sql.type(billingDocumentRow)`select ${columns} from ${mine} d order by issued_at desc, id desc limit ${page.limit} offset ${page.offset}`),
    conn.oneFirst(sql.type(z.object({ n: z.number() }))`
      select ((select count(*) from invoices where user_id = ${userId}) + (select count(*) from credit_notes where user_id = ${userId}))::int as n`),
  ]);
  return { rows, total };
}

/** One invoice or credit note, or null. */
export const findBillingDocument = (conn: CommonQueryMethods, id: number) =>
  conn.maybeOne(sql.type(billingDocumentRow)`select ${columns} from ${documents(sql.fragment`where id = ${id}`)} d`);
