/**
 * SQL of project subscriptions and plans.
 */
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods } from "../db/pool.ts";

export const planRow = z.object({
  id: z.number(),
  code: z.string(),
  name: z.string(),
  credits: z.number(),
  duration_days: z.number(),
  price_cents: z.number(),
  price_credits: z.number(),
  monthly_credits: z.number(),
  is_default: z.boolean(),
});
export type PlanRow = z.infer<typeof planRow>;
const planColumns = sql.fragment`id, code, name, credits, duration_days, price_cents, price_credits, monthly_credits, is_default`;

/** Every plan, cheapest first. */
export const listPlans = (conn: CommonQueryMethods) => conn.any(sql.type(planRow)`select ${planColumns} from plans order by price_cents, id`);

/** One plan, or null. */
export const findPlan = (conn: CommonQueryMethods, id: number) => conn.maybeOne(sql.type(planRow)`select ${planColumns} from plans where id = ${id}`);

export const subscriptionRow = z.object({
  id: z.number(),
  project_id: z.number(),
  owner_id: z.number(),
  plan_id: z.number(),
  plan_code: z.string(),
  plan_name: z.string(),
  started_at: z.date(),
  expires_at: z.date(),
  effective_expires_at: z.date(),
  credits_allocated: z.number(),
  credits_used: z.number(),
  cancelled_at: z.date().nullable(),
  expired_at: z.date().nullable(),
  renewal_failed_at: z.date().nullable(),
  renewal_error: z.string().nullable(),
  renewals: z.number(),
  is_latest: z.boolean(),
});
export type SubscriptionRow = z.infer<typeof subscriptionRow>;

const subscriptionSelect = sql.fragment`
  select s.id, s.project_id, p.owner_id, s.plan_id, pl.code as plan_code, pl.name as plan_name, s.started_at, s.expires_at,
    case when s.expired_at is null then s.expires_at else least(s.expires_at, s.expired_at, now()) end as effective_expires_at,
    s.credits_allocated, s.credits_used, s.cancelled_at, s.expired_at, s.renewal_failed_at, s.renewal_error, s.renewals,
    not exists (select 1 from subscriptions n where n.project_id = s.project_id and (n.started_at, n.id) > (s.started_at, s.id)) as is_latest
  from subscriptions s join projects p on p.id = s.project_id join plans pl on pl.id = s.plan_id`;

/** One subscription of a live project; `lock` takes its row lock. */
export async function findSubscription(conn: CommonQueryMethods, id: number, lock = false): Promise<SubscriptionRow | null> {
  return conn.maybeOne(sql.type(subscriptionRow)`${subscriptionSelect} where s.id = ${id} and p.deleted_at is null ${lock ? sql.fragment`for update of s` : sql.fragment``}`);
}

/** The latest period of live project `projectId` (the one that decides its state), or null. */
export async function findLatestSubscription(conn: CommonQueryMethods, projectId: number): Promise<SubscriptionRow | null> {
  return conn.maybeOne(sql.type(subscriptionRow)`${subscriptionSelect} where s.project_id = ${projectId} and p.deleted_at is null order by s.started_at desc, s.id desc limit 1`);
}

/** Subscriptions of the live projects `userId` owns, newest first. */
export async function listOwnedSubscriptions(conn: CommonQueryMethods, userId: number): Promise<readonly SubscriptionRow[]> {
  return conn.any(sql.type(subscriptionRow)`${subscriptionSelect} where p.owner_id = ${userId} and p.deleted_at is null order by s.started_at desc, s.id desc`);
}

/** Latest subscriptions whose period ended by `at` and were neither renewed nor expired yet (the renewal job's work). */
export async function listDueSubscriptions(conn: CommonQueryMethods, at: Date, limit: number): Promise<readonly number[]> {
  return conn.anyFirst(sql.type(z.object({ id: z.number() }))`
    select s.id from subscriptions s join projects p on p.id = s.project_id
    where s.expires_at <= ${at.toISOString()}::timestamptz and s.expired_at is null and p.deleted_at is null
      and not exists (select 1 from subscriptions n where n.project_id = s.project_id and (n.started_at, n.id) > (s.started_at, s.id))
    order by s.expires_at, s.id limit ${limit}`);
}

/** Inserts a subscription period of `plan` for a project, starting now; `transactionId` names the payment that bought it, if one did. */
export async function insertSubscription(conn: CommonQueryMethods, projectId: number, plan: PlanRow, transactionId: number | null = null): Promise<number> {
  return conn.oneFirst(sql.type(z.object({ id: z.number() }))`
    insert into subscriptions (project_id, plan_id, expires_at, credits_allocated, transaction_id)
    values (${projectId}, ${plan.id}, now() + make_interval(days => ${plan.duration_days}), ${plan.credits}, ${transactionId}) returning id`);
}

/**
 * Takes back the period that refunded payment `transactionId` bought: the subscription it
 * started loses one plan duration (renewals paid since in credits stay); when nothing is
 * left it is expired now, as the renewal job expires a lapsed period (the soft lock).
 */
export async function withdrawRefundedSubscription(conn: CommonQueryMethods, transactionId: number): Promise<void> {
  await conn.query(sql.type(ignoredRow)`
    update subscriptions s set
      expires_at = case when s.expires_at - make_interval(days => pl.duration_days) <= now() then least(s.expires_at, now()) else s.expires_at - make_interval(days => pl.duration_days) end,
      expired_at = case when s.expires_at - make_interval(days => pl.duration_days) <= now() then now() end
    from plans pl
    where pl.id = s.plan_id and s.transaction_id = ${transactionId} and s.expired_at is null`);
}
