/**
 * The Subscription resource (spec: id, project_id, plan_id, started_at, expires_at,
 * credits_allocated, credits_used, is_expired), with the plan, the days left and the
 * renewal state.
 */
import { z } from "zod";
import type { PlanRow, SubscriptionRow } from "../../shared/subscriptions/store.ts";
import { presentSubscriptionState } from "./project.ts";

export const subscriptionResource = z.object({
  id: z.number(),
  project_id: z.number(),
  plan_id: z.number(),
  plan: z.object({ code: z.string(), name: z.string() }),
  started_at: z.string(),
  expires_at: z.string(),
  credits_allocated: z.number(),
  credits_used: z.number(),
  is_expired: z.boolean(),
  days_remaining: z.number(),
  cancelled_at: z.string().nullable(),
  auto_renew: z.boolean().describe("Renewed from the owner's credits when it ends; false once cancelled."),
  renewal_error: z.string().nullable().describe("Why the last automatic renewal failed (`insufficient_credits`), if it did."),
});

/** A subscription period; `expires_at` is when it ended if the renewal job expired it early. */
export function presentSubscription(row: SubscriptionRow): z.infer<typeof subscriptionResource> {
  const state = presentSubscriptionState(row.effective_expires_at)!;
  return {
    id: row.id,
    project_id: row.project_id,
    plan_id: row.plan_id,
    plan: { code: row.plan_code, name: row.plan_name },
    started_at: row.started_at.toISOString(),
    expires_at: state.expires_at,
    credits_allocated: row.credits_allocated,
    credits_used: row.credits_used,
    is_expired: state.is_expired,
    days_remaining: state.days_remaining,
    cancelled_at: row.cancelled_at?.toISOString() ?? null,
    auto_renew: row.cancelled_at === null && row.expired_at === null,
    renewal_error: row.renewal_error,
  };
}

export const planResource = z.object({
  id: z.number(),
  code: z.string(),
  name: z.string(),
  credits: z.number().describe("Credits allocated to the project per period."),
  duration_days: z.number(),
  price_cents: z.number(),
  price_credits: z.number(),
  monthly_credits: z.number().describe("Credits the owner receives at the first login of each month."),
  is_default: z.boolean(),
});

/** A plan. */
export const presentPlan = (row: PlanRow): z.infer<typeof planResource> => ({ ...row });
