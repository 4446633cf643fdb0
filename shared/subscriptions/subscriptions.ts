/**
 * Buying, cancelling and renewing project subscriptions with credits, and the daily renewal
 * run. Glossary: a *period* is one subscriptions row (started_at → expires_at); *renewing*
 * extends the latest period by the plan's duration and charges its `price_credits`;
 * *expiring* marks a period that ran out unrenewed (`expired_at`), which soft-locks the
 * project until a renewal.
 */
import { z } from "zod";
import { findCreditAccount } from "../credits/store.ts";
import { spendCredits } from "../credits/ledger.ts";
import { ignoredRow, sql, type CommonQueryMethods, type DatabasePool } from "../db/pool.ts";
import { AppError, conflict } from "../errors.ts";
import type { Logger } from "../logger.ts";
import { notifyByEmail } from "../notifications/email.ts";
import { notifyByPush } from "../notifications/notify.ts";
import { findLatestSubscription, findPlan, findSubscription, insertSubscription, listDueSubscriptions, type PlanRow, type SubscriptionRow } from "./store.ts";

/**
 * Refuses a new period of `plan` while the project's latest period is one of the same plan
 * still running: the new one would start now and replace it, so the buyer would pay twice
 * for the days that overlap (a double-clicked purchase paid two periods and got one).
 * Renewing adds a period after the running one. Call it with the project row locked.
 * @throws 409 subscription_active
 */
export async function refuseRunningSamePlan(tx: CommonQueryMethods, projectId: number, plan: PlanRow): Promise<void> {
  const latest = await runningSamePlan(tx, projectId, plan);
  if (latest) {
    throw conflict(`The project's ${plan.name} subscription runs until ${latest.expires_at.toISOString()}; renew it (POST /subscriptions/${latest.id}/renew) to add a period.`, "subscription_active");
  }
}

/** The project's latest period when it is of `plan` and still running (a new one would overlap it), else null. */
export async function runningSamePlan(conn: CommonQueryMethods, projectId: number, plan: PlanRow): Promise<SubscriptionRow | null> {
  const latest = await findLatestSubscription(conn, projectId);
  return latest && latest.plan_id === plan.id && latest.effective_expires_at.getTime() > Date.now() ? latest : null;
}

/**
 * A new period of `plan` for the project, paid by `payerId` in credits, in `tx`.
 * @throws 402 insufficient_credits (nothing written).
 */
export async function subscribeWithCredits(tx: CommonQueryMethods, payerId: number, projectId: number, plan: PlanRow): Promise<number> {
  const id = await insertSubscription(tx, projectId, plan);
  if (plan.price_credits > 0) {
    await spendCredits(tx, { userId: payerId, amount: plan.price_credits, reason: "subscription", referenceType: "subscription", referenceId: String(id), idempotencyKey: `subscription:${id}` });
  }
  return id;
}

/**
 * Renews period `sub` (row-locked by the caller) by its plan's duration, charging `payerId`
 * in credits; clears cancellation and expiry. The new period follows the old one without a
 * gap when the renewal job renews it (`at` is ignored then); a renewal by hand starts from
 * `at` when the old one had already run out.
 * @throws 402 insufficient_credits (nothing written).
 */
export async function renewWithCredits(tx: CommonQueryMethods, sub: SubscriptionRow, payerId: number, at: Date | null): Promise<void> {
  const plan = (await findPlan(tx, sub.plan_id))!;
  if (plan.price_credits > 0) {
    await spendCredits(tx, {
      userId: payerId,
      amount: plan.price_credits,
      reason: "subscription_renewal",
      referenceType: "subscription",
      referenceId: String(sub.id),
      idempotencyKey: `subscription-renewal:${sub.id}:${sub.renewals + 1}`,
    });
  }
  await tx.query(sql.type(ignoredRow)`
    update subscriptions set
      expires_at = greatest(case when expired_at is null then expires_at else least(expires_at, expired_at) end, ${at ? at.toISOString() : null}::timestamptz)
        + make_interval(days => ${plan.duration_days}),
      expired_at = null, renewal_failed_at = null, renewal_error = null, cancelled_at = null,
      renewals = renewals + 1, credits_allocated = ${plan.credits}, credits_used = 0
    where id = ${sub.id}`);
}

/** Stops renewal of `sub`: it stays active until it expires. */
export async function cancelSubscription(tx: CommonQueryMethods, subId: number): Promise<void> {
  await tx.query(sql.type(ignoredRow)`update subscriptions set cancelled_at = coalesce(cancelled_at, now()) where id = ${subId}`);
}

const ownerRow = z.object({ project_name: z.string() });

/**
 * Ends `sub` at `at` (a failed renewal records why) and tells the owner through the channels
 * their `billing` notification choice allows (a notice about their plan, not a receipt of money).
 */
async function expire(tx: CommonQueryMethods, sub: SubscriptionRow, at: Date, error: { code: string; price: number } | null): Promise<void> {
  await tx.query(sql.type(ignoredRow)`
    update subscriptions set expired_at = ${at.toISOString()}::timestamptz,
      renewal_failed_at = ${error ? at.toISOString() : null}::timestamptz, renewal_error = ${error?.code ?? null}
    where id = ${sub.id}`);
  const { project_name: project } = await tx.one(sql.type(ownerRow)`select name as project_name from projects where id = ${sub.project_id}`);
  const balance = (await findCreditAccount(tx, sub.owner_id)).balance;
  const path = `/projects/${sub.project_id}`;
  await notifyByPush(tx, {
    userId: sub.owner_id,
    kind: "billing",
    title: error ? "Subscription not renewed" : "Subscription ended",
    body: `The ${sub.plan_name} subscription of ${project} ${error ? "could not be renewed" : "has ended"}; the project is read-only now.`,
    url: path,
  });
  await notifyByEmail(tx, {
    userId: sub.owner_id,
    kind: "billing",
    template: error ? "subscription_renewal_failed" : "subscription_expired",
    params: { project, plan: sub.plan_name, price: String(error?.price ?? 0), balance: String(balance) },
    path,
  });
}

/** What one renewal run did. */
export interface RenewalRun {
  renewed: number;
  expired: number;
  failed: number;
}

/**
 * The daily run at instant `at` (the job's clock): every latest period that ended by then is
 * renewed from the owner's credits, or expired when it was cancelled or the credits do not
 * cover it (recorded on the period, the owner e-mailed). Each period in its own transaction.
 */
export async function runRenewals(pool: DatabasePool, at: Date, log: Logger): Promise<RenewalRun> {
  const run: RenewalRun = { renewed: 0, expired: 0, failed: 0 };
  const seen = new Set<number>();
  for (;;) {
    const due = (await listDueSubscriptions(pool, at, 100)).filter((id) => !seen.has(id));
    if (!due.length) return run;
    for (const id of due) {
      seen.add(id);
      const outcome = await pool.transaction(async (tx) => {
        const sub = await findSubscription(tx, id, true);
        if (!sub || !sub.is_latest || sub.expired_at || sub.expires_at.getTime() > at.getTime()) return "skipped";
        if (sub.cancelled_at) {
          await expire(tx, sub, at, null);
          return "expired";
        }
        try {
          await renewWithCredits(tx, sub, sub.owner_id, null);
          return "renewed";
        } catch (error) {
          if (!(error instanceof AppError) || error.status !== 402) throw error;
          const plan = (await findPlan(tx, sub.plan_id))!;
          await expire(tx, sub, at, { code: error.code, price: plan.price_credits });
          return "failed";
        }
      });
      if (outcome === "skipped") continue;
      run[outcome] += 1;
      log.info({ subscription: id, outcome }, "subscription renewal");
    }
  }
}
