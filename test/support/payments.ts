/**
 * Helpers for payment tests: waiting for the worker to apply webhook events, and reading
 * what a user's credits and transactions look like in the database.
 */
import { z } from "zod";
import { sql, type DatabasePool } from "../../shared/db/pool.ts";
import { until } from "./wait.ts";

/** Waits until no payment event is left unprocessed. */
export const eventsSettled = (pool: DatabasePool) =>
  until(async () =>
    (await pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from payment_events where status = 'received'`)) === 0,
    { message: "payment events to be processed" },
  );

/** Waits until no automatic refund job (payments__refund) is left to run. */
export const refundsSettled = (pool: DatabasePool) =>
  until(async () =>
    (await pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from jobs where kind = 'payments__refund' and status in ('queued', 'running')`)) === 0,
    { message: "automatic refunds to be issued" },
  );

/** What the service recorded about an automatic refund of transaction `id`, and how many refund e-mails its buyer got. */
export async function automaticRefund(pool: DatabasePool, id: number) {
  return pool.one(sql.type(z.object({ status: z.string(), refund_reason: z.string().nullable(), provider_refund_id: z.string().nullable(), refunded_cents: z.number(), invoices: z.number(), mails: z.number() }))`
    select t.status, t.refund_reason, t.provider_refund_id, t.refunded_cents,
      (select count(*)::int from invoices i where i.transaction_id = t.id) as invoices,
      (select count(*)::int from jobs j where j.kind = 'emails__send' and j.payload->>'kind' = 'payment_refunded' and j.user_id = t.user_id) as mails
    from credit_transactions t where t.id = ${id}`);
}

/** Balance, open shortfall, ledger entry count and ledger sum of a user. */
export async function creditState(pool: DatabasePool, userId: number) {
  return pool.one(sql.type(z.object({ balance: z.number(), shortfall: z.number(), entries: z.number(), sum: z.number() }))`
    select coalesce((select balance from credit_accounts where user_id = ${userId}), 0) as balance,
      coalesce((select shortfall from credit_accounts where user_id = ${userId}), 0) as shortfall,
      (select count(*)::int from credit_ledger where user_id = ${userId}) as entries,
      coalesce((select sum(amount)::int from credit_ledger where user_id = ${userId}), 0) as sum`);
}

/** Row counts a refused webhook must leave alone. */
export async function paymentCounts(pool: DatabasePool) {
  return pool.one(sql.type(z.object({ events: z.number(), transactions: z.number(), entries: z.number(), jobs: z.number() }))`
    select (select count(*)::int from payment_events) as events, (select count(*)::int from credit_transactions) as transactions,
      (select count(*)::int from credit_ledger) as entries, (select count(*)::int from jobs) as jobs`);
}
