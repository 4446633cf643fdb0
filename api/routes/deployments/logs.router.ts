/**
 * Deployment logs (spec: `GET /deployments/{id}/logs` → `{logs}`, `POST
 * /deployments/{id}/logs/clear`; DESIGN §11: `GET /deployment-logs/{id}`). The same rows
 * arrive live as `LogAdded` on channel `private-deployment.{id}`.
 */
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { findLog, listLogs, logResource, presentLog } from "../../../shared/deployments/logs.ts";
import { conflict, notFound } from "../../../shared/errors.ts";
import { currentUser } from "../../context.ts";
import { idParams } from "../jobs/jobs.schema.ts";
import { defineRoute } from "../route.ts";
import { logsQuery } from "./deployments.schema.ts";
import { deploymentForAction, deploymentForRead } from "./load.ts";
import { projectStateResponses } from "../projectStates.ts";

const tags = ["Deployments"];

const list = defineRoute({
  method: "get",
  path: "/deployments/{id}/logs",
  summary: "The log of a deployment, oldest first",
  description:
    "`after_id` returns only the rows after that one: poll for what is new, or resume a live view after reconnecting to `private-deployment.{id}` (ask with the id of the last `LogAdded` row seen). `type` keeps only rows of the given types (`type=warning,error` or the parameter repeated).",
  tags,
  auth: "bearer",
  params: idParams,
  query: logsQuery,
  responses: { 200: { description: "The log rows", schema: z.object({ logs: z.array(logResource) }) } },
  handler: async (ctx, { params, query }) => {
    const { pool } = ctx.deps;
    const { deployment } = await deploymentForRead(pool, params.id, currentUser(ctx));
    const rows = await listLogs(pool, deployment.id, { afterId: query.after_id, types: query.type });
    ctx.body = { logs: rows.map(presentLog) };
  },
});

const show = defineRoute({
  method: "get",
  path: "/deployment-logs/{id}",
  summary: "One deployment log row with its metadata",
  description: "Visible to whoever sees the deployment's project; anyone else gets 404.",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { 200: { description: "The log row", schema: z.object({ log: logResource }) } },
  handler: async (ctx, { params }) => {
    const { pool } = ctx.deps;
    const row = await findLog(pool, params.id);
    if (!row) throw notFound("Deployment log");
    try {
      await deploymentForRead(pool, row.deployment_id, currentUser(ctx));
    } catch (error) {
      if ((error as { status?: number }).status === 404) throw notFound("Deployment log");
      throw error;
    }
    ctx.body = { log: presentLog(row) };
  },
});

const clear = defineRoute({
  method: "post",
  path: "/deployments/{id}/logs/clear",
  summary: "Remove the log of a deployment",
  description: "Refused with 409 while the deployment is queued or running.",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { ...projectStateResponses, 200: { description: "Cleared", schema: z.object({ message: z.string(), deleted: z.number() }) } },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    const deleted = await ctx.deps.pool.transaction(async (tx) => {
      const deployment = await deploymentForAction(tx, params.id, user, "config");
      if (deployment.status === "running" || (deployment.status === "pending" && deployment.job_id !== null)) {
        throw conflict("The deployment is queued or running; clear its log when it has finished.", "deployment_in_progress");
      }
      return tx.oneFirst(sql.type(z.object({ count: z.number() }))`
        with gone as (delete from deployment_logs where deployment_id = ${deployment.id} returning 1)
        select count(*)::int as count from gone`);
    });
    ctx.body = { message: "Logs cleared.", deleted };
  },
});

export const deploymentLogRoutes = [list, show, clear];
