/**
 * The administrators' billing report: revenue per day or month by payment method, credits
 * sold and spent, refunds, over a date range. Sums are bigint: each amount fits an integer
 * column, a period's total of them need not (admins move up to a billion credits at a time).
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";

export const reportRow = z.object({
  period: z.string(),
  revenue_cents: z.number(),
  cardprocessor_cents: z.number(),
  walletprovider_cents: z.number(),
  payments: z.number(),
  refunds: z.number(),
  refunded_cents: z.number(),
  credits_sold: z.number(),
  credits_spent: z.number(),
});
export type ReportRow = z.infer<typeof reportRow>;

/** One row per day or month in [from, to) with any activity, oldest first. */
export async function billingReport(conn: CommonQueryMethods, input: { group: "day" | "month"; from: string; to: string }): Promise<readonly ReportRow[]> {
  const unit = input.group === "day" ? sql.fragment`'day'` : sql.fragment`'month'`;
  const format = input.group === "day" ? "YYYY-MM-DD" : "YYYY-MM";
  return conn.any(sql.type(reportRow)`
    with paid as (
      select date_trunc(${unit}, succeeded_at at time zone 'UTC') as period, payment_method, amount_cents, credits from credit_transactions
      where succeeded_at >= ${input.from}::date and succeeded_at < ${input.to}::date and status in ('succeeded', 'refunded')
    ), refunded as (
      select date_trunc(${unit}, refunded_at at time zone 'UTC') as period, refunded_cents as amount_cents from credit_transactions
      where refunded_at >= ${input.from}::date and refunded_at < ${input.to}::date
    ), spent as (
      select date_trunc(${unit}, created_at at time zone 'UTC') as period, -amount as credits from credit_ledger
      where amount < 0 and reason not in ('payment_refunded', 'refund_shortfall_settled') and created_at >= ${input.from}::date and created_at < ${input.to}::date
    ), periods as (select period from paid union select period from refunded union select period from spent)
    select to_char(p.period, ${format}) as period,
      coalesce((select sum(amount_cents) from paid where paid.period = p.period), 0)::bigint as revenue_cents,
      coalesce((select sum(amount_cents) from paid where paid.period = p.period and payment_method = 'cardprocessor'), 0)::bigint as cardprocessor_cents,
      coalesce((select sum(amount_cents) from paid where paid.period = p.period and payment_method = 'walletprovider'), 0)::bigint as walletprovider_cents,
      (select count(*) from paid where paid.period = p.period)::bigint as payments,
      (select count(*) from refunded where refunded.period = p.period)::bigint as refunds,
      coalesce((select sum(amount_cents) from refunded where refunded.period = p.period), 0)::bigint as refunded_cents,
      coalesce((select sum(credits) from paid where paid.period = p.period), 0)::bigint as credits_sold,
      coalesce((select sum(credits) from spent where spent.period = p.period), 0)::bigint as credits_spent
    from periods p order by p.period`);
}
