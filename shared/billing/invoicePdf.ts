/**
 * Renders an invoice or a credit note as a PDF (pdfkit, with its built-in Helvetica: no font
 * files). A credit note names the invoice it corrects and shows the amounts it credits.
 */
import type { InvoiceRow } from "./invoices.ts";

/** An invoice, or a credit note (`kind` and the corrected invoice's number). */
export type PrintedDocument = InvoiceRow & { kind?: "invoice" | "credit_note"; invoice_number?: string | null };

const money = (cents: number, currency: string) => `${(cents / 100).toFixed(2)} ${currency}`;

/** The invoice or credit note as PDF bytes. */
export async function renderInvoicePdf(invoice: PrintedDocument, seller: { name: string }): Promise<Buffer> {
  const credit = invoice.kind === "credit_note";
  const title = `${credit ? "Credit note" : "Invoice"} ${invoice.number}`;
  // Loaded on first use: pdfkit and its fonts are a large bundle that only this route needs.
  const { default: PDFDocument } = await import("pdfkit");
  const doc = new PDFDocument({ size: "A4", margin: 56, info: { Title: title, Author: seller.name } });
  const chunks: Buffer[] = [];
  doc.on("data", (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on("end", () => resolve(Buffer.concat(chunks)));
    doc.on("error", reject);
  });
  doc.fontSize(20).text(title);
  doc.moveDown(0.5).fontSize(10).text(seller.name).text(`Date: ${invoice.issued_at.toISOString().slice(0, 10)}`);
  if (credit && invoice.invoice_number) doc.text(`Corrects invoice ${invoice.invoice_number}: the amounts below are refunded.`);
  doc.moveDown();
  const { buyer } = invoice;
  doc.text(credit ? "Credited to:" : "Billed to:").text(buyer.company ?? buyer.name);
  if (buyer.address) doc.text(buyer.address);
  if (buyer.country) doc.text(buyer.country);
  if (buyer.vat_id) doc.text(`VAT id: ${buyer.vat_id}`);
  doc.text(buyer.email);
  doc.moveDown();
  for (const line of invoice.lines) {
    doc.text(`${line.quantity} × ${line.description}`, { continued: true }).text(`   ${money(line.total_cents, invoice.currency)}`, { align: "right" });
  }
  doc.moveDown();
  doc.text(`Net: ${money(invoice.net_cents, invoice.currency)}`, { align: "right" });
  doc.text(`VAT ${invoice.vat_rate}%: ${money(invoice.vat_cents, invoice.currency)}`, { align: "right" });
  doc.fontSize(12).text(`${credit ? "Total credited" : "Total"}: ${money(invoice.total_cents, invoice.currency)}`, { align: "right" });
  doc.end();
  return done;
}
