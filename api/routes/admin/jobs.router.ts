/**
 * The operators' view of the queue (site administrators, `admin` scope): statistics,
 * the job list, retrying a failed job, the live workers. The console page reads these and
 * listens on `private-admin.jobs`, where every change of a job's status is announced.
 */
import { z } from "zod";
import { conflict, notFound } from "../../../shared/errors.ts";
import { jobStats, listJobs, liveWorkers, retryJob, type WorkerRow } from "../../../shared/jobs/console.ts";
import { presentJob } from "../../../shared/jobs/events.ts";
import { currentUser } from "../../context.ts";
import { paginated, paginatedSchema } from "../../pagination.ts";
import { authorize } from "../../policies/authorize.ts";
import { isSiteAdmin } from "../../policies/roles.ts";
import { registerChannelAuthorizer } from "../../realtime/channelAuth.ts";
import { idParams, jobResource, listJobsQuery } from "../jobs/jobs.schema.ts";
import { defineRoute } from "../route.ts";
import type { AppContext } from "../../context.ts";

const workerResource = z.object({ id: z.string(), hostname: z.string(), pid: z.number(), concurrency: z.number().nullable(), started_at: z.string(), beat_at: z.string() });
const presentWorker = (w: WorkerRow) => ({ ...w, started_at: w.started_at.toISOString(), beat_at: w.beat_at.toISOString() });

const statsResponse = z.object({
  kinds: z.array(z.object({ kind: z.string(), queued: z.number(), running: z.number() })),
  throughput: z.array(z.object({ at: z.string(), succeeded: z.number(), failed: z.number() })),
  totals: z.object({ queued: z.number(), running: z.number(), finished_last_hour: z.number(), failed_last_hour: z.number(), failure_rate: z.number() }),
  workers: z.array(workerResource),
  slowest: z.array(jobResource.extend({ duration_ms: z.number() })),
  failed: z.array(jobResource),
  web: z.object({ pid: z.number(), websocket_connections: z.number() }).describe("The web process that answered."),
});

const adminOnly = (ctx: AppContext) => authorize(isSiteAdmin(currentUser(ctx)), "Only administrators may see the job queue.");
const denied = { 403: { description: "Not an administrator" } };

const stats = defineRoute({
  method: "get",
  path: "/admin/jobs/stats",
  summary: "Queue depth and running jobs per kind, the last hour's throughput and failures, live workers, the slowest and the failed jobs",
  tags: ["Admin"],
  auth: "bearer",
  responses: { 200: { description: "The figures", schema: statsResponse }, ...denied },
  handler: async (ctx) => {
    adminOnly(ctx);
    const figures = await jobStats(ctx.deps.pool, ctx.deps.config.worker.staleAfterMs);
    ctx.body = {
      kinds: figures.kinds,
      throughput: figures.throughput.map((b) => ({ ...b, at: b.at.toISOString() })),
      totals: figures.totals,
      workers: figures.workers.map(presentWorker),
      slowest: figures.slowest.map((j) => ({ ...presentJob(j), duration_ms: Math.round(j.duration_ms) })),
      failed: figures.failed.map((j) => presentJob(j)),
      web: { pid: process.pid, websocket_connections: ctx.deps.metrics.realtimeConnections },
    };
  },
});

const list = defineRoute({
  method: "get",
  path: "/admin/jobs",
  summary: "Every job, newest first, filtered by status and kind",
  tags: ["Admin"],
  auth: "bearer",
  query: listJobsQuery,
  responses: { 200: { description: "A page of jobs", schema: paginatedSchema(jobResource) }, ...denied },
  handler: async (ctx, { query }) => {
    adminOnly(ctx);
    const { rows, total } = await listJobs(ctx.deps.pool, { status: query.status, kind: query.kind, limit: query.per_page, offset: (query.page - 1) * query.per_page });
    ctx.body = paginated(rows.map((j) => presentJob(j)), total, query, new URL(ctx.href));
  },
});

const retry = defineRoute({
  method: "post",
  path: "/admin/jobs/{id}/retry",
  summary: "Queue a failed job again (attempts start over)",
  tags: ["Admin"],
  auth: "bearer",
  params: idParams,
  responses: {
    202: { description: "Queued again", schema: z.object({ message: z.string(), job: jobResource }) },
    ...denied,
    409: { description: "The job has not failed, or was enqueued before payloads were kept" },
  },
  handler: async (ctx, { params }) => {
    adminOnly(ctx);
    const outcome = await ctx.deps.pool.transaction((tx) => retryJob(tx, params.id));
    if ("refusal" in outcome) {
      if (outcome.refusal === "not_found") throw notFound("Job");
      throw conflict(
        outcome.refusal === "not_failed" ? "Only a failed job can be retried." : "This job was enqueued before payloads were kept; it cannot be retried.",
        "job_not_retryable",
      );
    }
    ctx.status = 202;
    ctx.set("Location", `/api/jobs/${outcome.job.id}`);
    ctx.body = { message: "Job queued again.", job: presentJob(outcome.job) };
  },
});

const workers = defineRoute({
  method: "get",
  path: "/admin/workers",
  summary: "Worker processes alive now, with their heartbeats and concurrency",
  tags: ["Admin"],
  auth: "bearer",
  responses: { 200: { description: "The workers", schema: z.object({ workers: z.array(workerResource) }) }, ...denied },
  handler: async (ctx) => {
    adminOnly(ctx);
    ctx.body = { workers: (await liveWorkers(ctx.deps.pool, ctx.deps.config.worker.staleAfterMs)).map(presentWorker) };
  },
});

// `private-admin.jobs` carries JobChanged for every job (sql/migrations/0080), sent while some web
// process has a subscriber (0130, api/realtime/channelWatches.ts): administrators only.
registerChannelAuthorizer("private-admin.", async (_deps, user, id) => id === "jobs" && isSiteAdmin(user));

export const adminJobRoutes = [stats, list, retry, workers];
