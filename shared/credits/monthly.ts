/**
 * The monthly credit award at login: the first login of a calendar month (UTC) grants the
 * monthly credits of the user's best plan (over the live subscriptions of the projects they
 * own) or patron level, whichever is larger, once per user and month: a row in
 * `credit_monthly_awards` (primary key user and month) is written in the same transaction as
 * the ledger entry, so concurrent logins award once. A refunded payment's period takes back
 * its share of the awards made while it counted (`withdrawMonthlyAwards`), in proportion when
 * the refund is partial.
 */
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods, type DatabasePool } from "../db/pool.ts";
import { grantCredits, reverseCredits } from "./ledger.ts";

/** Periods left out of an entitlement: those a refunded payment bought. */
export interface Excluded {
  subscriptionId?: number;
  patronPeriodId?: number;
}

/** Monthly credits `userId` is entitled to at `at` (also a past instant), leaving out `excluded`. */
export async function monthlyCreditsOf(conn: CommonQueryMethods, userId: number, at: Date, excluded: Excluded = {}): Promise<number> {
  const instant = at.toISOString();
  return conn.oneFirst(sql.type(z.object({ credits: z.number() }))`
    select greatest(
      coalesce((
        select max(pl.monthly_credits) from projects p
        join lateral (
          select id, plan_id, expires_at, expired_at from subscriptions
          where project_id = p.id and started_at <= ${instant}::timestamptz order by started_at desc, id desc limit 1
        ) s on true
        join plans pl on pl.id = s.plan_id
        where p.owner_id = ${userId} and p.deleted_at is null and s.expires_at > ${instant}::timestamptz
          and (s.expired_at is null or s.expired_at > ${instant}::timestamptz) and s.id <> ${excluded.subscriptionId ?? 0}
      ), 0),
      coalesce((
        select max(l.monthly_credits) from patron_memberships m join patron_levels l on l.level = m.level
        where m.user_id = ${userId} and m.started_at <= ${instant}::timestamptz and m.expires_at > ${instant}::timestamptz
          and m.id <> ${excluded.patronPeriodId ?? 0}
      ), 0)
    )::int as credits`);
}

/** A partial refund: the payment's running refunded total went from `beforeCents` to `nowCents` of `amountCents`. */
export interface RefundedShare {
  beforeCents: number;
  nowCents: number;
  amountCents: number;
}

/**
 * Takes back what `userId`'s monthly awards since `from` owed to a period a refunded payment
 * bought: each award keeps what the user was entitled to at its time without that period;
 * the rest is reversed (as a refund is: what the balance lacks becomes shortfall). A partial
 * refund (`share`) takes back the share of what is still owed that it refunds of what was
 * still paid (rounded down), so the steps of a payment refunded bit by bit add up to the
 * whole; the award row keeps what is left, which a later refund compares with.
 */
export async function withdrawMonthlyAwards(tx: CommonQueryMethods, userId: number, from: Date, excluded: Excluded, transactionId: number, share?: RefundedShare): Promise<void> {
  const partial = share !== undefined && share.nowCents < share.amountCents;
  const awards = await tx.any(sql.type(z.object({ month: z.string(), credits: z.number(), created_at: z.date() }))`
    select to_char(month, 'YYYY-MM') as month, credits, created_at from credit_monthly_awards
    where user_id = ${userId} and created_at >= ${from.toISOString()}::timestamptz order by month for update`);
  for (const award of awards) {
    const owed = award.credits - Math.min(award.credits, await monthlyCreditsOf(tx, userId, award.created_at, excluded));
    const taken = partial ? Math.floor((owed * (share.nowCents - share.beforeCents)) / (share.amountCents - share.beforeCents)) : owed;
    if (taken <= 0) continue;
    await reverseCredits(tx, {
      userId,
      amount: taken,
      reason: "payment_refunded",
      referenceType: "monthly_award",
      referenceId: award.month,
      idempotencyKey: partial ? `monthly-refund:${award.month}:${transactionId}:${share.nowCents}` : `monthly-refund:${award.month}:${transactionId}`,
    });
    await tx.query(sql.type(ignoredRow)`update credit_monthly_awards set credits = ${award.credits - taken} where user_id = ${userId} and to_char(month, 'YYYY-MM') = ${award.month}`);
  }
}

/** Awards this month's credits if they were not awarded yet; true when this call awarded them. */
export async function awardMonthlyCredits(pool: DatabasePool, userId: number, at: Date = new Date()): Promise<boolean> {
  const credits = await monthlyCreditsOf(pool, userId, at);
  if (credits <= 0) return false;
  const month = `${at.toISOString().slice(0, 7)}-01`;
  return pool.transaction(async (tx) => {
    const inserted = await tx.maybeOneFirst(sql.type(z.object({ user_id: z.number() }))`
      insert into credit_monthly_awards (user_id, month, credits) values (${userId}, ${month}::date, ${credits})
      on conflict (user_id, month) do nothing returning user_id`);
    if (inserted === null) return false;
    const entry = await grantCredits(tx, { userId, amount: credits, reason: "monthly_credits", referenceType: "monthly_award", referenceId: month.slice(0, 7), idempotencyKey: `monthly:${month.slice(0, 7)}` });
    await tx.query(sql.type(ignoredRow)`update credit_monthly_awards set ledger_entry_id = ${entry.entryId} where user_id = ${userId} and month = ${month}::date`);
    return true;
  });
}
