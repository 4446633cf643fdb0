/**
 * Job records: GET /jobs/{id} (owner or site admin), the caller's job list, and cancelling
 * a job that has not started. The result, error and progress messages of a project's job
 * are shown only while the caller may read the project; channel `private-job.{id}`, whose
 * events carry them, is open to those who may read both the job and its content.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../../../shared/db/pool.ts";
import { accessFragment, findProject, projectAccessLevels } from "../../../shared/db/projects.ts";
import type { UserRow } from "../../../shared/db/users.ts";
import { conflict, notFound } from "../../../shared/errors.ts";
import { workerJobKey } from "../../../shared/jobs/enqueue.ts";
import { presentJob, publishJobCompleted } from "../../../shared/jobs/events.ts";
import { findJob, jobColumns, jobRow, markCancelled, type JobRow } from "../../../shared/jobs/records.ts";
import { settleCancelled } from "../../../shared/jobs/settleCancelled.ts";
import { currentUser, type AppContext } from "../../context.ts";
import { paginated, paginatedSchema, pageFragment } from "../../pagination.ts";
import { authorize } from "../../policies/authorize.ts";
import { canCancelJob, canReadJobContent, canViewJob } from "../../policies/job.ts";
import { isSiteAdmin } from "../../policies/roles.ts";
import { registerChannelAuthorizer } from "../../realtime/channelAuth.ts";
import { defineRoute } from "../route.ts";
import { idParams, jobResource, listJobsQuery } from "./jobs.schema.ts";

/** Whether `user` may read the content of `job` now (its project read only for a project's job). */
async function contentReadable(conn: CommonQueryMethods, user: UserRow, job: JobRow): Promise<boolean> {
  if (job.project_id === null || isSiteAdmin(user)) return true;
  return canReadJobContent(user, job, await findProject(conn, job.project_id, user.id));
}

async function visibleJob(ctx: AppContext, id: number) {
  const job = await findJob(ctx.deps.pool, id);
  if (!job || !canViewJob(currentUser(ctx), job)) throw notFound("Job");
  return job;
}

/** A listed job with its project's owner and the caller's access to it (null when it has none or the project is gone). */
const listedJobRow = jobRow.extend({ project_owner_id: z.number().nullable(), project_access: z.enum(projectAccessLevels).nullable() });

const show = defineRoute({
  method: "get",
  path: "/jobs/{id}",
  summary: "A job's status, progress and result",
  tags: ["Jobs"],
  auth: "bearer",
  params: idParams,
  responses: { 200: { description: "The job", schema: z.object({ job: jobResource }) } },
  handler: async (ctx, { params }) => {
    const job = await visibleJob(ctx, params.id);
    ctx.body = { job: presentJob(job, { withContent: await contentReadable(ctx.deps.pool, currentUser(ctx), job) }) };
  },
});

const list = defineRoute({
  method: "get",
  path: "/jobs",
  summary: "The caller's jobs, newest first",
  tags: ["Jobs"],
  auth: "bearer",
  query: listJobsQuery,
  responses: { 200: { description: "A page of jobs", schema: paginatedSchema(jobResource) } },
  handler: async (ctx, { query }) => {
    const user = currentUser(ctx);
    const filters = [sql.fragment`user_id = ${user.id}`];
    if (query.status) filters.push(sql.fragment`status = ${query.status}`);
    if (query.kind) filters.push(sql.fragment`kind = ${query.kind}`);
    const where = sql.join(filters, sql.fragment` and `);
    const [rows, total] = await Promise.all([
      ctx.deps.pool.any(sql.type(listedJobRow)`
        select ${jobColumns}, pa.owner_id as project_owner_id, pa.access as project_access from jobs
        left join lateral (
          select p.owner_id, ${accessFragment(user.id)} as access from projects p where p.id = jobs.project_id and p.deleted_at is null
        ) pa on true
        where ${where} order by id desc ${pageFragment(query)}`),
      ctx.deps.pool.oneFirst(sql.type(z.object({ count: z.number() }))`select count(*)::int as count from jobs where ${where}`),
    ]);
    const present = ({ project_owner_id, project_access, ...job }: z.infer<typeof listedJobRow>) => {
      const project = project_owner_id === null ? null : { owner_id: project_owner_id, access: project_access };
      return presentJob(job, { withContent: canReadJobContent(user, job, project) });
    };
    ctx.body = paginated(rows.map(present), total, query, new URL(ctx.href));
  },
});

const cancel = defineRoute({
  method: "post",
  path: "/jobs/{id}/cancel",
  summary: "Cancel a job that has not started yet",
  tags: ["Jobs"],
  auth: "bearer",
  params: idParams,
  responses: {
    200: { description: "Cancelled", schema: z.object({ message: z.string(), job: jobResource }) },
    403: { description: "A kind its owner may not cancel (a notice such as an e-mail or a push, a payout): only an administrator may" },
    409: { description: "The job already started or finished" },
  },
  handler: async (ctx, { params }) => {
    const job = await visibleJob(ctx, params.id);
    authorize(canCancelJob(currentUser(ctx), job), "Jobs of this kind (such as a notice sent to you or a payout) run even if asked to stop; only an administrator may cancel one.");
    const cancelled = await ctx.deps.pool.transaction(async (tx) => {
      const row = await markCancelled(tx, job.id);
      if (!row) return null;
      // Deletes the worker job, or, if a worker locked it a moment ago, stops its retries;
      // either way the task skips it, since the record now says cancelled.
      await tx.query(sql.type(z.object({}))`select graphile_worker.remove_job(${workerJobKey(job.id)})`);
      await publishJobCompleted(tx, row);
      await settleCancelled(tx, row);
      return row;
    });
    if (!cancelled) throw conflict("The job has already started or finished and can no longer be cancelled.", "job_not_cancellable");
    ctx.body = { message: "Job cancelled.", job: presentJob(cancelled, { withContent: await contentReadable(ctx.deps.pool, currentUser(ctx), cancelled) }) };
  },
});

registerChannelAuthorizer("private-job.", async (deps, user, id) => {
  if (!/^\d{1,18}$/.test(id)) return false;
  const job = await findJob(deps.pool, Number(id));
  return job !== null && canViewJob(user, job) && (await contentReadable(deps.pool, user, job));
});

export const jobRoutes = [list, show, cancel];
