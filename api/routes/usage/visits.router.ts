/**
 * POST /visits (public): a page view, counted without identifying anyone (shared/usage/
 * visitor.ts); `DNT: 1` and `Sec-GPC: 1` requests are not counted. GET /admin/visits:
 * visitors, views, top paths and referrers per day.
 */
import { z } from "zod";
import { insertPageView, saltOf, visitReport } from "../../../shared/usage/visitStore.ts";
import { keptPath, mayCount, referrerHost, utcDay, visitorHash } from "../../../shared/usage/visitor.ts";
import { currentUser } from "../../context.ts";
import { authorize } from "../../policies/authorize.ts";
import { isSiteAdmin } from "../../policies/roles.ts";
import { defineRoute } from "../route.ts";
import { dayRange } from "./performance.router.ts";
import { visitBody, visitsQuery } from "./usage.schema.ts";

/** The salt of the current day, per process (one query a day instead of one a view). */
let cachedSalt: { day: string; salt: Buffer } | undefined;

const recordVisit = defineRoute({
  method: "post",
  path: "/visits",
  summary: "Count a page view (not counted with DNT: 1 or Sec-GPC: 1)",
  tags: ["Metrics"],
  auth: "public",
  body: visitBody,
  responses: { 202: { description: "Received; `counted` says whether it was counted", schema: z.object({ counted: z.boolean() }) } },
  handler: async (ctx, { body }) => {
    ctx.status = 202;
    const userAgent = ctx.get("user-agent");
    if (!mayCount({ dnt: ctx.get("dnt"), gpc: ctx.get("sec-gpc"), userAgent })) {
      ctx.body = { counted: false };
      return;
    }
    const { pool, config } = ctx.deps;
    const day = utcDay();
    if (cachedSalt?.day !== day) cachedSalt = { day, salt: await saltOf(pool, day) };
    const ownHosts = [...new Set([new URL(config.appUrl).hostname, new URL(config.frontendUrl).hostname])];
    await insertPageView(pool, { day, visitor: visitorHash(cachedSalt.salt, ctx.ip, userAgent), path: keptPath(body.path), referrerHost: referrerHost(body.referrer, ownHosts) });
    ctx.body = { counted: true };
  },
});

const dayStats = z.object({
  day: z.string(),
  visitors: z.number(),
  views: z.number(),
  top_paths: z.array(z.object({ path: z.string(), views: z.number(), visitors: z.number() })),
  top_referrers: z.array(z.object({ host: z.string(), views: z.number() })),
});

const readVisits = defineRoute({
  method: "get",
  path: "/admin/visits",
  summary: "Visitors, views, top paths and referrers per day (site administrators only)",
  tags: ["Admin"],
  auth: "bearer",
  query: visitsQuery,
  responses: { 200: { description: "Days, newest first", schema: z.object({ data: z.array(dayStats), from: z.string(), to: z.string() }) }, 403: { description: "Not an administrator" } },
  handler: async (ctx, { query }) => {
    authorize(isSiteAdmin(currentUser(ctx)), "Only administrators may read visits.");
    const range = dayRange(query.from, query.to, 30);
    const from = range.from.toISOString().slice(0, 10);
    const to = new Date(range.to.getTime() - 86_400_000).toISOString().slice(0, 10);
    const report = await visitReport(ctx.deps.pool, from, to, query.top);
    ctx.body = {
      from,
      to,
      data: report.days.map((d) => ({
        ...d,
        top_paths: report.paths.filter((p) => p.day === d.day).map(({ path, views, visitors }) => ({ path, views, visitors })),
        top_referrers: report.referrers.filter((r) => r.day === d.day).map((r) => ({ host: r.referrer_host, views: r.views })),
      })),
    };
  },
});

export const visitRoutes = [recordVisit, readVisits];
