/**
 * Seller analytics (spec Seller metrics: total_sales, total_revenue_credits,
 * total_revenue_euros, pending_payout, completed_payouts), with sales per day over the last
 * 30 days and the best-selling templates. Refunded sales do not count. Sums are bigint (read
 * as safe integers): a seller's credits and cents can pass the 32-bit range.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";

const totalsRow = z.object({
  total_sales: z.number(),
  revenue_credits: z.number(),
  revenue_cents: z.number(),
  pending_cents: z.number(),
  completed_cents: z.number(),
  earned_cents: z.number(),
});

/** The seller's metrics. */
export async function sellerAnalytics(conn: CommonQueryMethods, sellerId: number) {
  const totals = await conn.one(sql.type(totalsRow)`
    select
      (select count(*)::int from store_purchases p join store_templates st on st.id = p.store_template_id
        where st.seller_id = ${sellerId} and p.status = 'completed') as total_sales,
      (select coalesce(sum(p.price_credits), 0)::bigint from store_purchases p join store_templates st on st.id = p.store_template_id
        where st.seller_id = ${sellerId} and p.status = 'completed') as revenue_credits,
      (select coalesce(sum(p.price_euro_cents), 0)::bigint from store_purchases p join store_templates st on st.id = p.store_template_id
        where st.seller_id = ${sellerId} and p.status = 'completed') as revenue_cents,
      (select coalesce(sum(amount_cents), 0)::bigint from seller_earnings where seller_id = ${sellerId} and status = 'pending') as pending_cents,
      (select coalesce(sum(transferred_cents), 0)::bigint from seller_payouts where seller_id = ${sellerId} and status = 'paid') as completed_cents,
      (select coalesce(sum(amount_cents), 0)::bigint from seller_earnings where seller_id = ${sellerId} and status <> 'reversed') as earned_cents`);
  const perDay = await conn.any(sql.type(z.object({ date: z.string(), sales: z.number(), revenue_credits: z.number(), revenue_cents: z.number() }))`
    select to_char(d.day, 'YYYY-MM-DD') as date, count(p.id)::int as sales,
      coalesce(sum(p.price_credits), 0)::bigint as revenue_credits, coalesce(sum(p.price_euro_cents), 0)::bigint as revenue_cents
    from generate_series(current_date - 29, current_date, interval '1 day') as d(day)
    left join (store_purchases p join store_templates st on st.id = p.store_template_id and st.seller_id = ${sellerId})
      on p.status = 'completed' and p.created_at >= d.day and p.created_at < d.day + interval '1 day'
    group by d.day order by d.day`);
  const top = await conn.any(sql.type(z.object({ id: z.number(), name: z.string(), sales: z.number(), revenue_credits: z.number(), revenue_cents: z.number() }))`
    select st.id, st.name, count(p.id)::int as sales, coalesce(sum(p.price_credits), 0)::bigint as revenue_credits,
      coalesce(sum(p.price_euro_cents), 0)::bigint as revenue_cents
    from store_templates st join store_purchases p on p.store_template_id = st.id and p.status = 'completed'
    where st.seller_id = ${sellerId}
    group by st.id order by sales desc, st.id limit 10`);
  return { totals, perDay, top };
}
