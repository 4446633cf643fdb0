/**
 * GET /subscriptions: the subscriptions of the caller's projects, with `is_expired` and
 * `days_remaining` computed.
 */
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { currentUser } from "../../context.ts";
import { presentSubscriptionState } from "../../presenters/project.ts";
import { defineRoute } from "../route.ts";

const subscriptionRow = z.object({
  id: z.number(),
  project_id: z.number(),
  plan_id: z.number(),
  plan_code: z.string(),
  plan_name: z.string(),
  started_at: z.date(),
  expires_at: z.date(),
  credits_allocated: z.number(),
  credits_used: z.number(),
  cancelled_at: z.date().nullable(),
});

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
});

const list = defineRoute({
  method: "get",
  path: "/subscriptions",
  summary: "Subscriptions of the caller's projects",
  tags: ["Subscriptions"],
  auth: "bearer",
  responses: { 200: { description: "Subscriptions", schema: z.object({ data: z.array(subscriptionResource) }) } },
  handler: async (ctx) => {
    const rows = await ctx.deps.pool.any(sql.type(subscriptionRow)`
      select s.id, s.project_id, s.plan_id, pl.code as plan_code, pl.name as plan_name, s.started_at, s.expires_at,
        s.credits_allocated, s.credits_used, s.cancelled_at
      from subscriptions s join projects p on p.id = s.project_id join plans pl on pl.id = s.plan_id
      where p.owner_id = ${currentUser(ctx).id} and p.deleted_at is null
      order by s.started_at desc, s.id desc`);
    ctx.body = {
      data: rows.map((r) => {
        const state = presentSubscriptionState(r.expires_at)!;
        return {
          id: r.id,
          project_id: r.project_id,
          plan_id: r.plan_id,
          plan: { code: r.plan_code, name: r.plan_name },
          started_at: r.started_at.toISOString(),
          expires_at: state.expires_at,
          credits_allocated: r.credits_allocated,
          credits_used: r.credits_used,
          is_expired: state.is_expired,
          days_remaining: state.days_remaining,
          cancelled_at: r.cancelled_at?.toISOString() ?? null,
        };
      }),
    };
  },
});

export const subscriptionRoutes = [list];
