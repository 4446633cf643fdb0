/**
 * Renders an invoice as a PDF (pdfkit, with its built-in Helvetica: no font files).
 */
import type { InvoiceRow } from "./invoices.ts";

const money = (cents: number, currency: string) => `${(cents / 100).toFixed(2)} ${currency}`;

/** The invoice as PDF bytes. */
export async function renderInvoicePdf(invoice: InvoiceRow, seller: { name: string }): Promise<Buffer> {
  // Loaded on first use: pdfkit and its fonts are a large bundle that only this route needs.
  const { default: PDFDocument } = await import("pdfkit");
  const doc = new PDFDocument({ size: "A4", margin: 56, info: { Title: `Invoice ${invoice.number}`, Author: seller.name } });
  const chunks: Buffer[] = [];
  doc.on("data", (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on("end", () => resolve(Buffer.concat(chunks)));
    doc.on("error", reject);
  });
  doc.fontSize(20).text(`Invoice ${invoice.number}`);
  doc.moveDown(0.5).fontSize(10).text(seller.name).text(`Date: ${invoice.issued_at.toISOString().slice(0, 10)}`);
  doc.moveDown();
  const { buyer } = invoice;
  doc.text("Billed to:").text(buyer.company ?? buyer.name);
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
  doc.fontSize(12).text(`Total: ${money(invoice.total_cents, invoice.currency)}`, { align: "right" });
  doc.end();
  return done;
}
