/**
 * Seller payouts (DESIGN §4: payouts are jobs). A request records the amount; the
 * `payouts__process` job attaches pending earnings older than the refund hold (oldest first,
 * up to the amount) in one transaction, writes the SEPA transfer file for the operator, then
 * marks the payout sent; an administrator marks it paid. Each step checks the payout's
 * status first, so a retried job attaches nothing twice and writes the same file again.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";

export const payoutStatuses = ["requested", "processing", "sent", "paid", "failed"] as const;

export const payoutRow = z.object({
  id: z.number(),
  seller_id: z.number(),
  amount_cents: z.number(),
  status: z.enum(payoutStatuses),
  transferred_cents: z.number().nullable(),
  sepa_storage_key: z.string().nullable(),
  failure: z.string().nullable(),
  processed_at: z.date().nullable(),
  paid_at: z.date().nullable(),
  created_at: z.date(),
});
export type PayoutRow = z.infer<typeof payoutRow>;

const columns = sql.fragment`id, seller_id, amount_cents, status, transferred_cents, sepa_storage_key, failure, processed_at, paid_at, created_at`;

/**
 * Euro cents a seller may still ask for: pending earnings less the payouts not yet processed,
 * and never below 0 (a refund after a request can leave less pending than was requested).
 */
export async function availableCents(conn: CommonQueryMethods, sellerId: number): Promise<number> {
  return conn.oneFirst(sql.type(z.object({ cents: z.number() }))`
    select greatest((select coalesce(sum(amount_cents), 0) from seller_earnings where seller_id = ${sellerId} and status = 'pending')
      - (select coalesce(sum(amount_cents), 0) from seller_payouts where seller_id = ${sellerId} and status = 'requested'), 0)::bigint as cents`);
}

/** Records a payout request. */
export async function insertPayout(tx: CommonQueryMethods, sellerId: number, amountCents: number): Promise<PayoutRow> {
  return tx.one(sql.type(payoutRow)`
    insert into seller_payouts (seller_id, amount_cents) values (${sellerId}, ${amountCents}) returning ${columns}`);
}

/** Locks the seller's row, so that requests of one seller are checked one at a time. */
export async function lockSeller(tx: CommonQueryMethods, sellerId: number): Promise<void> {
  await tx.query(sql.type(z.object({ id: z.number() }))`select id from users where id = ${sellerId} for update`);
}

/** A page of a seller's payouts, newest first. */
export async function listPayouts(conn: CommonQueryMethods, sellerId: number, page: { page: number; rows: number }) {
  const rows = await conn.any(sql.type(payoutRow.extend({ total: z.number() }))`
    select ${columns}, count(*) over ()::int as total from seller_payouts where seller_id = ${sellerId}
    order by id desc limit ${page.rows} offset ${(page.page - 1) * page.rows}`);
  return { rows: rows.map(({ total: _t, ...row }) => row), total: rows[0]?.total ?? 0 };
}

/** One payout, locked. */
export async function lockPayout(tx: CommonQueryMethods, id: number): Promise<PayoutRow | null> {
  return tx.maybeOne(sql.type(payoutRow)`select ${columns} from seller_payouts where id = ${id} for update`);
}

/**
 * Step 1 of processing: a `requested` payout takes the seller's pending earnings older than
 * `holdDays`, oldest first, while they fit in its amount, and becomes `processing` (or
 * `failed` when none fit). Returns the payout as it is afterwards; other states are left alone.
 */
export async function attachEarnings(tx: CommonQueryMethods, payoutId: number, holdDays: number): Promise<PayoutRow | null> {
  const payout = await lockPayout(tx, payoutId);
  if (!payout || payout.status !== "requested") return payout;
  // Payouts of one seller attach one at a time: a second one waits here until the first
  // commits, and its next statement then sees what the first took. Without this, two jobs
  // computed the same eligible earnings and the later update, re-checking only the row it
  // waited for, took them again: both payouts carried the same money.
  await tx.any(sql.type(z.object({ id: z.number() }))`
    select id from seller_earnings where seller_id = ${payout.seller_id} and status = 'pending' order by id for update`);
  const taken = await tx.oneFirst(sql.type(z.object({ cents: z.number() }))`
    with eligible as (
      select id, sum(amount_cents) over (order by created_at, id) as running
      from seller_earnings
      where seller_id = ${payout.seller_id} and status = 'pending' and created_at <= now() - make_interval(days => ${holdDays})
    ), taken as (
      update seller_earnings e set status = 'paid_out', payout_id = ${payoutId}
      from eligible where e.id = eligible.id and eligible.running <= ${payout.amount_cents} and e.status = 'pending'
      returning e.amount_cents
    )
    select coalesce(sum(amount_cents), 0)::int as cents from taken`);
  return tx.one(sql.type(payoutRow)`
    update seller_payouts set transferred_cents = ${taken}, processed_at = now(),
      status = ${taken > 0 ? "processing" : "failed"},
      failure = ${taken > 0 ? null : `No earnings past the ${holdDays}-day refund hold fit in this amount yet.`}
    where id = ${payoutId} returning ${columns}`);
}

/** A `requested` payout that cannot be processed becomes `failed` with `failure`, taking nothing. Returns it as it is afterwards. */
export async function failPayout(tx: CommonQueryMethods, payoutId: number, failure: string): Promise<PayoutRow | null> {
  await tx.query(sql.type(z.object({}))`
    update seller_payouts set status = 'failed', failure = ${failure}, processed_at = now() where id = ${payoutId} and status = 'requested'`);
  return lockPayout(tx, payoutId);
}

/** Step 3: a `processing` payout whose transfer file is stored becomes `sent`. */
export async function markSent(tx: CommonQueryMethods, payoutId: number, storageKey: string): Promise<void> {
  await tx.query(sql.type(z.object({}))`
    update seller_payouts set status = 'sent', sepa_storage_key = ${storageKey} where id = ${payoutId} and status = 'processing'`);
}

/** An administrator's confirmation that the money left: `processing` or `sent` → `paid`. Returns false otherwise. */
export async function markPaid(tx: CommonQueryMethods, payoutId: number): Promise<boolean> {
  const row = await tx.maybeOne(sql.type(z.object({ id: z.number() }))`
    update seller_payouts set status = 'paid', paid_at = now() where id = ${payoutId} and status in ('processing', 'sent') returning id`);
  return row !== null;
}
