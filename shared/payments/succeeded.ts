/**
 * What a succeeded payment buys besides credits: its invoice, and a subscription period for its
 * project or a patron membership period. Runs in the transaction that marks the payment succeeded, so
 * the period exists exactly when the payment counts; a refund of the payment takes the period back.
 * A payment that can deliver nothing is refunded by the service (shared/payments/autoRefund.ts).
 */
import { sql, type CommonQueryMethods } from "../db/pool.ts";
import { issueInvoice } from "../billing/invoices.ts";
import { withdrawMonthlyAwards, type Excluded } from "../credits/monthly.ts";
import { addPatronPeriod, findPatronLevel, withdrawRefundedPatronPeriod } from "../patrons/renewal.ts";
import { findPlan, insertSubscription, withdrawRefundedSubscription } from "../subscriptions/store.ts";
import { runningSamePlan } from "../subscriptions/subscriptions.ts";
import { z } from "zod";
import { completeEuroPurchase, refundEuroPurchase } from "../store/euroPurchases.ts";
import type { RefundReason } from "./autoRefund.ts";
import type { TransactionRow } from "./store.ts";

/**
 * Runs in the transaction that marks `transaction` succeeded: delivers what it bought and
 * issues its invoice. Returns why it could deliver nothing (the caller refunds it, with no
 * invoice: nothing was sold), or null.
 */
export async function afterPaymentSucceeded(tx: CommonQueryMethods, transaction: TransactionRow): Promise<RefundReason | null> {
  const undelivered = await deliver(tx, transaction);
  if (undelivered === null) await issueInvoice(tx, transaction);
  return undelivered;
}

async function deliver(tx: CommonQueryMethods, transaction: TransactionRow): Promise<RefundReason | null> {
  if (transaction.kind === "subscription" && transaction.item_id !== null && transaction.project_id !== null) {
    // The project row lock serialises two successes for one project, so the second sees the first's period.
    const live = await tx.maybeOneFirst(sql.type(z.object({ id: z.number() }))`select id from projects where id = ${transaction.project_id} and deleted_at is null for update`);
    if (live === null) return "project_deleted";
    const plan = await findPlan(tx, transaction.item_id);
    if (!plan) return "item_unavailable";
    // A new period replaces the running one: one of the same plan would be paid twice for the same days.
    if (await runningSamePlan(tx, transaction.project_id, plan)) return "subscription_active";
    await insertSubscription(tx, transaction.project_id, plan, transaction.id);
  }
  if (transaction.kind === "patron" && transaction.item_id !== null) {
    const level = await findPatronLevel(tx, transaction.item_id);
    if (!level) return "item_unavailable";
    await addPatronPeriod(tx, transaction.user_id, level, new Date(), transaction.id);
  }
  if (transaction.kind === "store_template") return completeEuroPurchase(tx, transaction);
  return null;
}

/** A period `transaction` bought that had begun, and the instant from which monthly awards counted it. */
interface AwardWindow {
  userId: number;
  from: Date;
  excluded: Excluded;
}

/**
 * The periods `transaction` bought that had begun, running or ended (read before a refund
 * takes them back): the monthly credits awarded while they counted came with the payment.
 */
async function awardWindows(tx: CommonQueryMethods, transaction: TransactionRow): Promise<AwardWindow[]> {
  const window = z.object({ id: z.number(), user_id: z.number(), from_at: z.date() });
  if (transaction.kind === "subscription") {
    // The duration a refund takes back is the period's last (renewals paid in credits before it stay).
    const sub = await tx.maybeOne(sql.type(window)`
      select s.id, p.owner_id as user_id,
        greatest(s.started_at, least(s.expires_at, coalesce(s.expired_at, s.expires_at)) - make_interval(days => pl.duration_days)) as from_at
      from subscriptions s join projects p on p.id = s.project_id join plans pl on pl.id = s.plan_id
      where s.transaction_id = ${transaction.id}`);
    return sub ? [{ userId: sub.user_id, from: sub.from_at, excluded: { subscriptionId: sub.id } }] : [];
  }
  if (transaction.kind === "patron") {
    const periods = await tx.any(sql.type(window)`
      select id, user_id, started_at as from_at from patron_memberships where transaction_id = ${transaction.id} and started_at < now()`);
    return periods.map((period) => ({ userId: period.user_id, from: period.from_at, excluded: { patronPeriodId: period.id } }));
  }
  return [];
}

/** Runs in the transaction that marks `transaction` refunded: what it bought is taken back. */
export async function afterPaymentRefunded(tx: CommonQueryMethods, transaction: TransactionRow): Promise<void> {
  // Monthly credits awarded while a period counted go with it, also when it had already ended:
  // its time cannot be given back, its credits can (what is spent becomes shortfall, as for a package).
  const windows = await awardWindows(tx, transaction);
  if (transaction.kind === "subscription") await withdrawRefundedSubscription(tx, transaction.id);
  if (transaction.kind === "patron") await withdrawRefundedPatronPeriod(tx, transaction.id);
  for (const window of windows) await withdrawMonthlyAwards(tx, window.userId, window.from, window.excluded, transaction.id);
  if (transaction.kind === "store_template") await refundEuroPurchase(tx, transaction);
}

/**
 * Runs in the transaction that records a partial refund of `transaction` (its running total
 * from `beforeCents` to `nowCents`): the period stays until all of the amount is back, and the
 * monthly credits it brought are taken back in the share refunded, as a package's credits are.
 */
export async function afterPartialRefund(tx: CommonQueryMethods, transaction: TransactionRow, beforeCents: number, nowCents: number): Promise<void> {
  for (const window of await awardWindows(tx, transaction)) {
    await withdrawMonthlyAwards(tx, window.userId, window.from, window.excluded, transaction.id, { beforeCents, nowCents, amountCents: transaction.amount_cents });
  }
}
