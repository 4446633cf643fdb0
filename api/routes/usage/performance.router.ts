/**
 * POST /performance-metrics (public, rate-limited per IP like every public route): a batch
 * of client timing measures. GET /admin/performance-metrics: p50/p75/p95 per day, metric
 * and route, client measures and the server's own sampled request timings (name `server`).
 */
import { z } from "zod";
import { invalidField } from "../../../shared/errors.ts";
import { insertMeasures, percentiles } from "../../../shared/usage/performanceStore.ts";
import { currentUser } from "../../context.ts";
import { authorize } from "../../policies/authorize.ts";
import { isSiteAdmin } from "../../policies/roles.ts";
import { defineRoute } from "../route.ts";
import { percentileResource, performanceQuery, recordMetricsBody } from "./usage.schema.ts";

const DAY_MS = 86_400_000;
const MAX_DAYS = 92;

const record = defineRoute({
  method: "post",
  path: "/performance-metrics",
  summary: "Record a batch of client timing measures (LCP, INP, CLS, TTFB, FCP, FID)",
  tags: ["Metrics"],
  auth: "public",
  body: recordMetricsBody,
  responses: { 202: { description: "Recorded", schema: z.object({ accepted: z.number() }) } },
  handler: async (ctx, { body }) => {
    await insertMeasures(ctx.deps.pool, body.metrics);
    ctx.deps.rollup.add(body.metrics);
    ctx.status = 202;
    ctx.body = { accepted: body.metrics.length };
  },
});

/** The [from, to) instants of a day range, default the last 7 days; at most MAX_DAYS. */
export function dayRange(from: string | undefined, to: string | undefined, defaultDays: number): { from: Date; to: Date } {
  const end = to ? new Date(`${to}T00:00:00Z`).getTime() + DAY_MS : Math.ceil((Date.now() + 1) / DAY_MS) * DAY_MS;
  const start = from ? new Date(`${from}T00:00:00Z`).getTime() : end - defaultDays * DAY_MS;
  if (start >= end) throw invalidField("from", "The range is empty: from must not be after to.");
  if (end - start > MAX_DAYS * DAY_MS) throw invalidField("from", `The range may span at most ${MAX_DAYS} days.`);
  return { from: new Date(start), to: new Date(end) };
}

const read = defineRoute({
  method: "get",
  path: "/admin/performance-metrics",
  summary: "Percentiles of timing measures per day, metric and route (site administrators only)",
  description:
    "Read from daily histograms (buckets 5 % wide, each with its smallest and largest value), as `percentile_cont` over the measures would compute them: exact when the values within a bucket are evenly spread (one or two distinct values, or consecutive whole numbers), otherwise within the bucket's 5 % and in practice within about 1 %. Measures accepted by another web process appear within about a second.",
  tags: ["Admin"],
  auth: "bearer",
  query: performanceQuery,
  responses: {
    200: { description: "Percentiles, newest day first", schema: z.object({ data: z.array(percentileResource), from: z.string(), to: z.string() }) },
    403: { description: "Not an administrator" },
  },
  handler: async (ctx, { query }) => {
    authorize(isSiteAdmin(currentUser(ctx)), "Only administrators may read performance metrics.");
    const range = dayRange(query.from, query.to, 7);
    // This process's latest cells first (a failed write is logged and retried by the next one).
    await ctx.deps.rollup.flush().catch(() => {});
    const rows = await percentiles(ctx.deps.pool, { ...range, name: query.name, route: query.route, deviceClass: query.device_class }, 1000);
    const round = (n: number) => Math.round(n * 1000) / 1000;
    ctx.body = {
      from: range.from.toISOString().slice(0, 10),
      to: new Date(range.to.getTime() - DAY_MS).toISOString().slice(0, 10),
      data: rows.map((r) => ({ day: r.day, name: r.name, route: r.route, count: r.count, p50: round(r.percentiles[0]!), p75: round(r.percentiles[1]!), p95: round(r.percentiles[2]!) })),
    };
  },
});

export const performanceRoutes = [record, read];
