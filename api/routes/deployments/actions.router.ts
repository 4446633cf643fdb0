/**
 * Running deployments: execute (pending → queued job), retry (failed → pending → queued,
 * keeping the deployer state so finished steps are not repeated) and rollback (a new
 * deployment of an earlier successful deployment's generation that supersedes the current
 * one). Each answers 202 with the deployment and its job; progress arrives on channel
 * `private-deployment.{id}` (`LogAdded`, `DeploymentCompleted`) and `GET /deployments/{id}`.
 *
 * One deployment per environment runs at a time: a second one is refused with 409 while
 * another is queued or running, since both would write to the same target.
 */
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods } from "../../../shared/db/pool.ts";
import type { UserRow } from "../../../shared/db/users.ts";
import { environmentBusy, findDeployment, insertDeployment, type DeploymentRow } from "../../../shared/deployments/records.ts";
import { conflict, forbidden, invalidField } from "../../../shared/errors.ts";
import { findConnection } from "../../../shared/git/store.ts";
import { enqueue } from "../../../shared/jobs/enqueue.ts";
import { presentJob } from "../../../shared/jobs/events.ts";
import { deploymentsRun } from "../../../shared/jobs/kinds.ts";
import type { JobRow } from "../../../shared/jobs/records.ts";
import { currentUser, type AppContext } from "../../context.ts";
import { presentDeployment } from "../../presenters/deployment.ts";
import { idParams } from "../jobs/jobs.schema.ts";
import { defineRoute } from "../route.ts";
import { rollbackBody, startedResponse } from "./deployments.schema.ts";
import { deploymentForAction } from "./load.ts";
import { projectStateResponses } from "../projectStates.ts";

const tags = ["Deployments"];

/** Refuses a run while another deployment to the same environment is queued or running. */
async function assertEnvironmentFree(tx: CommonQueryMethods, deployment: DeploymentRow): Promise<void> {
  // A commit or push through a git connection has no environment to share.
  if (deployment.environment_id === null && deployment.git_connection_id !== null) return;
  // One through a connection never had an environment (nor its type); its connection is what went.
  if (deployment.environment_id === null && deployment.operation !== "deploy" && deployment.target_environment === null) {
    throw conflict(`The git connection of this ${deployment.operation} was removed; connect the account again and start a new ${deployment.operation}.`, "git_connection_deleted");
  }
  if (deployment.environment_id === null) throw conflict("The environment of this deployment was deleted.", "environment_deleted");
  await tx.query(sql.type(ignoredRow)`select 1 from environments where id = ${deployment.environment_id} for update`);
  if (await environmentBusy(tx, deployment.environment_id, deployment.id)) {
    throw conflict("Another deployment to this environment is queued or running; wait for it to finish.", "deployment_in_progress");
  }
}

/**
 * A commit or push through a user's own git connection runs with that user's token, so only
 * they may run it (again); other members reach the repository through an environment. @throws 403
 */
async function assertConnectionOwner(tx: CommonQueryMethods, deployment: DeploymentRow, user: UserRow): Promise<void> {
  if (deployment.git_connection_id === null) return;
  const connection = await findConnection(tx, deployment.git_connection_id);
  if (connection && connection.user_id !== user.id) {
    throw forbidden(`This ${deployment.operation} went through another user's git connection; only they may run it again.`);
  }
}

/**
 * Refuses to supersede deployment `supersededId` unless it is the live one of `deployment`'s
 * target (the newest success to its environment by its method): an older one is no longer
 * there to roll back, and marking it would leave the one actually replaced "succeeded".
 */
async function assertLive(tx: CommonQueryMethods, deployment: DeploymentRow, supersededId: number, refusal: string): Promise<void> {
  const live = await tx.maybeOneFirst(sql.type(z.object({ id: z.number() }))`
    select id from deployments
    where environment_id = ${deployment.environment_id} and deployment_method = ${deployment.deployment_method} and operation = 'deploy' and status = 'succeeded'
    order by id desc limit 1`);
  if (live !== supersededId) {
    throw conflict(`${refusal}: deployment #${live} replaced #${supersededId} on this target since; roll that one back instead.`, "invalid_deployment_state");
  }
}

/** A queued run: the deployment as queued and its job. */
export interface Started {
  /** The deployment as this request queued it (the worker may already be running it). */
  deployment: DeploymentRow;
  job: JobRow;
}

/** Enqueues the run of `deployment` and records its job (also for git commits and pushes). */
export async function startRun(tx: CommonQueryMethods, deployment: DeploymentRow, user: UserRow): Promise<Started> {
  const job = await enqueue(tx, deploymentsRun, { deployment_id: deployment.id }, { userId: user.id, projectId: deployment.project_id });
  await tx.query(sql.type(ignoredRow)`
    update deployments set status = 'pending', job_id = ${job.id}, error = null, error_code = null, finished_at = null, updated_at = now()
    where id = ${deployment.id}`);
  return { deployment: (await findDeployment(tx, deployment.id))!, job };
}

/** 202 with the queued deployment: what this request did, not a race with the worker. */
export function answer(ctx: AppContext, started: Started, message: string): void {
  ctx.status = 202;
  ctx.set("Location", `/api/deployments/${started.deployment.id}`);
  ctx.body = { message, deployment: presentDeployment(started.deployment), job: presentJob(started.job) };
}

function refuseState(deployment: DeploymentRow, action: "execute" | "retry" | "roll back"): never {
  const reasons: Record<DeploymentRow["status"], string> = {
    pending: "is already queued",
    running: "is already running",
    succeeded: "already succeeded",
    failed: "failed; retry it instead",
    rolled_back: "was rolled back",
  };
  const reason = deployment.status === "pending" && deployment.job_id === null ? "has not run yet" : reasons[deployment.status];
  throw conflict(`Cannot ${action} deployment #${deployment.id}: it ${reason}.`, "invalid_deployment_state");
}

/** Execute and retry: queues deployment `id` when `runnable` says its state allows it, and answers 202. */
async function queueRun(ctx: AppContext, id: number, action: "execute" | "retry", runnable: (d: DeploymentRow) => boolean, message: string): Promise<void> {
  const user = currentUser(ctx);
  const started = await ctx.deps.pool.transaction(async (tx) => {
    const deployment = await deploymentForAction(tx, id, user, "deploy");
    await assertConnectionOwner(tx, deployment, user);
    if (!runnable(deployment)) refuseState(deployment, action);
    await assertEnvironmentFree(tx, deployment);
    // A rollback retried after another deployment went live would replace that one instead.
    if (deployment.rollback_of !== null) await assertLive(tx, deployment, deployment.rollback_of, `Cannot ${action} rollback #${deployment.id}`);
    return startRun(tx, deployment, user);
  });
  answer(ctx, started, message);
}

const execute = defineRoute({
  method: "post",
  path: "/deployments/{id}/execute",
  summary: "Run a pending deployment",
  description: "Queues the deployment's job and answers 202; the status moves pending → running → succeeded | failed.",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { ...projectStateResponses, 202: { description: "Queued", schema: startedResponse }, 409: { description: "The deployment is queued or running already, or another runs in its environment; or the project is archived (`project_archived`)" } },
  handler: (ctx, { params }) =>
    queueRun(ctx, params.id, "execute", (d) => d.status === "pending" && d.job_id === null, "Deployment queued."),
});

const retry = defineRoute({
  method: "post",
  path: "/deployments/{id}/retry",
  summary: "Run a failed deployment again",
  description: "Steps that an earlier attempt finished (an uploaded folder, a pushed branch, an opened pull request) are reused, not repeated. A commit or push made through a user's own git connection runs with that user's token: only they may retry it.",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { ...projectStateResponses, 202: { description: "Queued again", schema: startedResponse }, 403: { description: "The caller may not deploy in this project, or the commit or push went through another user's git connection (only its owner may retry it)" }, 409: { description: "The deployment has not failed, or it is a rollback of a deployment that another one replaced since, or another runs in its environment, or its environment (`environment_deleted`) or git connection (`git_connection_deleted`) was removed; or the project is archived (`project_archived`)" } },
  handler: (ctx, { params }) => queueRun(ctx, params.id, "retry", (d) => d.status === "failed", "Deployment queued for another run."),
});

const rollback = defineRoute({
  method: "post",
  path: "/deployments/{id}/rollback",
  summary: "Roll a deployment back to an earlier successful one",
  description:
    "Only the live deployment (the newest success to its environment by its method) can be rolled back. `rollback_to` names an earlier succeeded deployment of the same project and environment by the same method (not a git commit or push). A new deployment of its code generation is created and queued (`rollback_of` = this deployment, `rollback_to` = the earlier one); when it succeeds, this deployment becomes `rolled_back`.",
  tags,
  auth: "bearer",
  params: idParams,
  body: rollbackBody,
  responses: { ...projectStateResponses, 202: { description: "The rollback deployment, queued", schema: startedResponse }, 409: { description: "The deployment or the one to restore is not in a state to roll back from or to; or the project is archived (`project_archived`)" } },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const started = await ctx.deps.pool.transaction(async (tx) => {
      const current = await deploymentForAction(tx, params.id, user, "deploy");
      if (current.status !== "succeeded") refuseState(current, "roll back");
      if (current.operation !== "deploy" || current.target_environment === null) {
        throw conflict(`Deployment #${current.id} is a git ${current.operation}; it cannot be rolled back (push an earlier generation's commit instead).`, "invalid_deployment_state");
      }
      const targetEnvironment = current.target_environment;
      await assertLive(tx, current, current.id, `Cannot roll back deployment #${current.id}`);
      const target = await findDeployment(tx, body.rollback_to);
      if (!target || target.project_id !== current.project_id || target.environment_id !== current.environment_id || target.id >= current.id) {
        throw invalidField("rollback_to", "The rollback to field must name an earlier deployment to the same environment.");
      }
      // Only what was deployed to this target can be restored to it: not what another method of
      // the environment put on another server, nor a git commit or push through it.
      if (target.operation !== "deploy" || target.deployment_method !== current.deployment_method) {
        const what = target.operation === "deploy" ? `a deployment by ${target.deployment_method.toUpperCase()}` : `a git ${target.operation}`;
        throw invalidField("rollback_to", `Deployment #${target.id} is ${what}; only an earlier deployment to the same environment by ${current.deployment_method.toUpperCase()} can be restored.`);
      }
      if (target.status !== "succeeded") throw invalidField("rollback_to", `Deployment #${target.id} did not succeed (it is ${target.status}); only a successful deployment can be restored.`);
      if (target.code_generation_id === null) throw invalidField("rollback_to", `The code generation of deployment #${target.id} was deleted.`);
      await assertEnvironmentFree(tx, current);
      const id = await insertDeployment(tx, {
        projectId: current.project_id,
        environmentId: current.environment_id!,
        codeGenerationId: target.code_generation_id,
        method: current.deployment_method,
        targetEnvironment,
        userId: user.id,
        rollbackOf: current.id,
        rollbackTo: target.id,
      });
      return startRun(tx, (await findDeployment(tx, id))!, user);
    });
    answer(ctx, started, `Rollback to deployment #${body.rollback_to} queued.`);
  },
});

export const deploymentActionRoutes = [execute, retry, rollback];

