/**
 * Buying and renewing patron membership periods (the rows `isPatron` reads). A purchase adds
 * a period of the level's duration, starting when the caller's latest period ends (or now);
 * the daily run renews a period that ended uncancelled from the member's credits, or marks it
 * lapsed when the credits do not cover it.
 */
import { z } from "zod";
import { spendCredits } from "../credits/ledger.ts";
import { ignoredRow, sql, type CommonQueryMethods, type DatabasePool } from "../db/pool.ts";
import { AppError } from "../errors.ts";
import type { Logger } from "../logger.ts";

export const patronLevelRow = z.object({
  level: z.number(),
  name: z.string(),
  price_credits: z.number(),
  price_cents: z.number(),
  monthly_credits: z.number(),
  duration_days: z.number(),
});
export type PatronLevelRow = z.infer<typeof patronLevelRow>;

/** Every level, lowest first. */
export const listPatronLevels = (conn: CommonQueryMethods) =>
  conn.any(sql.type(patronLevelRow)`select level, name, price_credits, price_cents, monthly_credits, duration_days from patron_levels order by level`);

/** One level, or null. */
export const findPatronLevel = (conn: CommonQueryMethods, level: number) =>
  conn.maybeOne(sql.type(patronLevelRow)`select level, name, price_credits, price_cents, monthly_credits, duration_days from patron_levels where level = ${level}`);

/** Adds a period of `level` for `userId`, after the latest one still running; `transactionId` names the payment that bought it, if one did. Returns its id. */
export async function addPatronPeriod(tx: CommonQueryMethods, userId: number, level: PatronLevelRow, at: Date = new Date(), transactionId: number | null = null): Promise<number> {
  // Serialises purchases of one user, so two periods never start at the same end.
  await tx.query(sql.type(ignoredRow)`select 1 from users where id = ${userId} for update`);
  const id = await tx.oneFirst(sql.type(z.object({ id: z.number() }))`
    with latest as (
      select max(expires_at) as ends from patron_memberships where user_id = ${userId} and expires_at > ${at.toISOString()}::timestamptz
    )
    insert into patron_memberships (user_id, level, started_at, expires_at, transaction_id)
    select ${userId}, ${level.level}, coalesce(ends, ${at.toISOString()}::timestamptz),
      coalesce(ends, ${at.toISOString()}::timestamptz) + make_interval(days => ${level.duration_days}), ${transactionId}
    from latest returning id`);
  // The new period decides renewal from now on (it is the latest); the running one keeps its
  // own choice (a cancellation too), which counts again should the new one be refunded before it begins.
  await tx.query(sql.type(ignoredRow)`
    update patron_memberships set renewed_at = now()
    where user_id = ${userId} and id <> ${id} and renewed_at is null and expires_at > ${at.toISOString()}::timestamptz`);
  return id;
}

/** A period taken back: its user, where it ended, and from where the periods after it are to follow on. */
const shifted = z.object({ user_id: z.number(), expires_at: z.string(), follow_from: z.string() });

/**
 * Takes back the period that refunded payment `transactionId` bought: a running one ends now
 * and is not renewed, one that had not begun yet is removed. Periods after it move up so that
 * no gap opens (they were bought to follow on), and the period a removed one followed, when
 * that is the latest again, renews (or lapses, if cancelled) as it would have without the purchase.
 */
export async function withdrawRefundedPatronPeriod(tx: CommonQueryMethods, transactionId: number): Promise<void> {
  // Instants travel as text, so the microseconds JavaScript dates would drop are kept.
  const removed = await tx.any(sql.type(shifted)`
    delete from patron_memberships where transaction_id = ${transactionId} and started_at >= now()
    returning user_id, expires_at::text, started_at::text as follow_from`);
  for (const period of removed) {
    await moveUpFollowing(tx, period);
    await tx.query(sql.type(ignoredRow)`
      update patron_memberships m set renewed_at = null
      where m.user_id = ${period.user_id} and m.renewed_at is not null and m.lapsed_at is null and m.expires_at > now()
        and not exists (select 1 from patron_memberships n where n.user_id = m.user_id and n.expires_at > m.expires_at)`);
  }
  const ended = await tx.any(sql.type(shifted)`
    update patron_memberships m set expires_at = now(), lapsed_at = coalesce(m.lapsed_at, now())
    from patron_memberships before where before.id = m.id and m.transaction_id = ${transactionId} and m.expires_at > now()
    returning m.user_id, before.expires_at::text, now()::text as follow_from`);
  for (const period of ended) await moveUpFollowing(tx, period);
}

/** Moves the user's periods that started where `period` ended up, to follow on from `follow_from`. */
async function moveUpFollowing(tx: CommonQueryMethods, period: z.infer<typeof shifted>): Promise<void> {
  const by = sql.fragment`(${period.expires_at}::timestamptz - ${period.follow_from}::timestamptz)`;
  await tx.query(sql.type(ignoredRow)`
    update patron_memberships set started_at = started_at - ${by}, expires_at = expires_at - ${by}
    where user_id = ${period.user_id} and started_at >= ${period.expires_at}::timestamptz`);
}

/**
 * Buys a period of `level` with credits, in `tx`.
 * @throws 402 insufficient_credits (nothing written).
 */
export async function buyPatronWithCredits(tx: CommonQueryMethods, userId: number, level: PatronLevelRow): Promise<number> {
  const id = await addPatronPeriod(tx, userId, level);
  if (level.price_credits > 0) {
    await spendCredits(tx, { userId, amount: level.price_credits, reason: "patron_membership", referenceType: "patron_membership", referenceId: String(id), idempotencyKey: `patron:${id}` });
  }
  return id;
}

/** Whether the renewal of `userId`'s membership is cancelled: its latest running period (the one the daily run renews) is. */
export async function patronRenewalCancelled(conn: CommonQueryMethods, userId: number): Promise<boolean> {
  const cancelled = await conn.maybeOneFirst(sql.type(z.object({ cancelled: z.boolean() }))`
    select cancelled_at is not null as cancelled from patron_memberships where user_id = ${userId} and expires_at > now() order by expires_at desc limit 1`);
  return cancelled ?? false;
}

/** Stops renewal of the caller's running periods; returns how many. */
export async function cancelPatron(conn: CommonQueryMethods, userId: number): Promise<number> {
  const rows = await conn.any(sql.type(z.object({ id: z.number() }))`
    update patron_memberships set cancelled_at = now() where user_id = ${userId} and expires_at > now() and cancelled_at is null returning id`);
  return rows.length;
}

const dueRow = z.object({ id: z.number(), user_id: z.number(), level: z.number(), expires_at: z.date(), cancelled_at: z.date().nullable() });

/** The daily run at `at`: renews or lapses every latest period that ended by then. */
export async function runPatronRenewals(pool: DatabasePool, at: Date, log: Logger): Promise<{ renewed: number; lapsed: number }> {
  const result = { renewed: 0, lapsed: 0 };
  const due = await pool.any(sql.type(dueRow)`
    select m.id, m.user_id, m.level, m.expires_at, m.cancelled_at from patron_memberships m
    where m.expires_at <= ${at.toISOString()}::timestamptz and m.renewed_at is null and m.lapsed_at is null
      and not exists (select 1 from patron_memberships n where n.user_id = m.user_id and n.expires_at > m.expires_at)
    order by m.expires_at limit 1000`);
  for (const period of due) {
    const outcome = await pool.transaction(async (tx) => {
      const current = await tx.maybeOne(sql.type(dueRow)`
        select id, user_id, level, expires_at, cancelled_at from patron_memberships where id = ${period.id} and renewed_at is null and lapsed_at is null for update`);
      if (!current) return null;
      const level = await findPatronLevel(tx, current.level);
      const lapse = async () => {
        await tx.query(sql.type(ignoredRow)`update patron_memberships set lapsed_at = ${at.toISOString()}::timestamptz where id = ${current.id}`);
        return "lapsed" as const;
      };
      if (current.cancelled_at || !level) return lapse();
      const next = await tx.oneFirst(sql.type(z.object({ id: z.number() }))`
        insert into patron_memberships (user_id, level, started_at, expires_at)
        values (${current.user_id}, ${level.level}, ${current.expires_at.toISOString()}::timestamptz,
          greatest(${current.expires_at.toISOString()}::timestamptz, ${at.toISOString()}::timestamptz) + make_interval(days => ${level.duration_days}))
        returning id`);
      try {
        if (level.price_credits > 0) {
          await spendCredits(tx, { userId: current.user_id, amount: level.price_credits, reason: "patron_renewal", referenceType: "patron_membership", referenceId: String(next), idempotencyKey: `patron-renewal:${current.id}` });
        }
      } catch (error) {
        if (!(error instanceof AppError) || error.status !== 402) throw error;
        await tx.query(sql.type(ignoredRow)`delete from patron_memberships where id = ${next}`);
        return lapse();
      }
      await tx.query(sql.type(ignoredRow)`update patron_memberships set renewed_at = now() where id = ${current.id}`);
      return "renewed" as const;
    });
    if (outcome) {
      result[outcome] += 1;
      log.info({ membership: period.id, outcome }, "patron renewal");
    }
  }
  return result;
}
