/**
 * Purchases of store templates (spec purchase rules): one completed purchase per buyer and
 * template (a concurrent double purchase meets the unique key and charges once; a refunded
 * one is history, and its buyer may buy again as a new purchase), of the template's
 * current version; the seller's share is recorded as a `pending` earning in the same
 * transaction; credits are spent through the ledger in that transaction too. A refund gives
 * credits back and reverses the earning while it is still pending.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";
import { grantCredits, spendCredits } from "../credits/ledger.ts";
import { AppError, conflict, forbidden, notFound } from "../errors.ts";
import { assertPortableVersion } from "./portability.ts";
import { findVersion } from "./versions.ts";

export const purchaseRow = z.object({
  id: z.number(),
  /** Null once the buyer closed their account (the sale stays). */
  buyer_id: z.number().nullable(),
  store_template_id: z.number(),
  version_id: z.number(),
  payment_type: z.enum(["credits", "euros", "free"]),
  price_credits: z.number(),
  price_euro_cents: z.number(),
  status: z.enum(["completed", "refunded"]),
  created_at: z.date(),
});
export type PurchaseRow = z.infer<typeof purchaseRow>;

const purchaseColumns = sql.fragment`p.id, p.buyer_id, p.store_template_id, p.version_id, p.payment_type, p.price_credits, p.price_euro_cents, p.status, p.created_at`;

const buyable = z.object({
  id: z.number(),
  seller_id: z.number().nullable(),
  status: z.string(),
  price_type: z.enum(["credits", "euros", "free"]),
  price_credits: z.number(),
  price_euro_cents: z.number(),
  current_version_id: z.number().nullable(),
});

/** Shares of a sale: the seller's euro cents and credits. */
export interface SellerShare {
  sharePercent: number;
  creditValueCents: number;
}

/**
 * Buys the current version of store template `storeTemplateId` for `buyerId`.
 * @throws 404 unknown or unpublished, 403 own template, 409 already bought or a version whose file names are not
 * portable (`non_portable_path`, before anything is charged), 422 a euro price (see euroPurchases.ts), 402 from the spend
 */
export async function purchase(
  tx: CommonQueryMethods,
  input: { buyerId: number; storeTemplateId: number },
  share: SellerShare,
): Promise<PurchaseRow> {
  const template = await tx.maybeOne(sql.type(buyable)`
    select id, seller_id, status, price_type, price_credits, price_euro_cents, current_version_id
    from store_templates where id = ${input.storeTemplateId}`);
  if (!template || template.status !== "published" || template.current_version_id === null) throw notFound("Store template");
  if (template.seller_id === input.buyerId) throw forbidden("You cannot buy your own template.");
  if (template.price_type === "euros") {
    throw new AppError(422, "validation_failed", "Euro prices are paid by card or wallet.", { payment_method: ["The payment method field is required for euro prices."] });
  }
  assertPortableVersion((await findVersion(tx, template.current_version_id))!.content, "bought");
  // The unique key serialises a double purchase: the second waits for the first and then finds it.
  const row = await tx.maybeOne(sql.type(purchaseRow)`
    insert into store_purchases as p (buyer_id, store_template_id, version_id, payment_type, price_credits, price_euro_cents)
    values (${input.buyerId}, ${template.id}, ${template.current_version_id}, ${template.price_type},
      ${template.price_type === "credits" ? template.price_credits : 0}, 0)
    on conflict (buyer_id, store_template_id) where status = 'completed' do nothing
    returning ${purchaseColumns}`);
  if (!row) throw conflict("You already bought this template.", "already_purchased");
  if (template.price_type === "credits") {
    const { entryId } = await spendCredits(tx, {
      userId: input.buyerId,
      amount: template.price_credits,
      reason: "store_purchase",
      referenceType: "store_purchase",
      referenceId: String(row.id),
      idempotencyKey: `store_purchase:${row.id}`,
    });
    await tx.query(sql.type(z.object({}))`update store_purchases set ledger_entry_id = ${entryId} where id = ${row.id}`);
    const cents = Math.floor((template.price_credits * share.creditValueCents * share.sharePercent) / 100);
    if (template.seller_id !== null) {
      await tx.query(sql.type(z.object({}))`
        insert into seller_earnings (seller_id, purchase_id, amount_cents, amount_credits)
        values (${template.seller_id}, ${row.id}, ${cents}, ${template.price_credits})`);
    }
  }
  await tx.query(sql.type(z.object({}))`update store_templates set sales_count = sales_count + 1 where id = ${template.id}`);
  return row;
}

/**
 * Marks a purchase refunded: the sale no longer counts and the seller's earning is reversed
 * while it is pending (one already paid out stays with its payout). Returns false when it
 * was refunded before.
 */
export async function refundPurchase(tx: CommonQueryMethods, purchaseId: number): Promise<boolean> {
  const row = await tx.maybeOne(sql.type(z.object({ store_template_id: z.number(), buyer_id: z.number().nullable(), price_credits: z.number(), payment_type: z.string() }))`
    update store_purchases set status = 'refunded', refunded_at = now()
    where id = ${purchaseId} and status = 'completed' returning store_template_id, buyer_id, price_credits, payment_type`);
  if (!row) return false;
  // A closed account has no balance to give credits back to.
  if (row.payment_type === "credits" && row.price_credits > 0 && row.buyer_id !== null) {
    await grantCredits(tx, {
      userId: row.buyer_id,
      amount: row.price_credits,
      reason: "store_refund",
      referenceType: "store_purchase",
      referenceId: String(purchaseId),
      idempotencyKey: `store_refund:${purchaseId}`,
    });
  }
  await tx.query(sql.type(z.object({}))`update store_templates set sales_count = greatest(sales_count - 1, 0) where id = ${row.store_template_id}`);
  await tx.query(sql.type(z.object({}))`update seller_earnings set status = 'reversed' where purchase_id = ${purchaseId} and status = 'pending'`);
  return true;
}

/** The completed purchase of `buyerId` for a template, or null. */
export async function findPurchase(conn: CommonQueryMethods, buyerId: number, storeTemplateId: number): Promise<PurchaseRow | null> {
  return conn.maybeOne(sql.type(purchaseRow)`
    select ${purchaseColumns} from store_purchases p
    where p.buyer_id = ${buyerId} and p.store_template_id = ${storeTemplateId} and p.status = 'completed'`);
}

export const purchaseListRow = purchaseRow.extend({
  template_name: z.string(),
  /** The seller's; null once they closed their account. */
  seller_id: z.number().nullable(),
  seller_username: z.string().nullable(),
  seller_name: z.string().nullable(),
  version: z.number(),
});
export type PurchaseListRow = z.infer<typeof purchaseListRow>;

/** A page of a buyer's purchases, newest first, and the total. */
export async function listPurchases(conn: CommonQueryMethods, buyerId: number, page: { page: number; rows: number }) {
  const rows = await conn.any(sql.type(purchaseListRow.extend({ total: z.number() }))`
    select ${purchaseColumns}, st.name as template_name, u.id as seller_id, u.username as seller_username, u.name as seller_name,
      v.version, count(*) over ()::int as total
    from store_purchases p join store_templates st on st.id = p.store_template_id left join users u on u.id = st.seller_id
    join store_template_versions v on v.id = p.version_id
    where p.buyer_id = ${buyerId}
    order by p.created_at desc, p.id desc
    limit ${page.rows} offset ${(page.page - 1) * page.rows}`);
  return { rows: rows.map(({ total: _t, ...row }) => row), total: rows[0]?.total ?? 0 };
}
