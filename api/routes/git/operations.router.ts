/**
 * Commit and push without a pull request (DESIGN §11, §14): `POST /projects/{p}/git/commit`
 * makes one commit of a generation's files on a branch (created from the default branch when
 * missing); `POST /projects/{p}/git/push` points another branch at the commit a generation
 * got. Access is the caller's git connection (`connection_id` + `repository`) or one of the
 * project's environments with a git config (`environment_id`, always its own repository).
 * Both run as deployments (operation `commit` / `push`): 202 with the deployment and its
 * job, logs on `GET /deployments/{id}/logs` and `private-deployment.{id}`, retry as usual.
 */
import { z } from "zod";
import { branchName, detectGitProvider } from "../../../shared/deploy/configs.ts";
import { findEnvironment, type EnvironmentRow } from "../../../shared/deployments/environments.ts";
import { environmentBusy, findDeployment } from "../../../shared/deployments/records.ts";
import { ignoredRow, sql, type CommonQueryMethods } from "../../../shared/db/pool.ts";
import type { UserRow } from "../../../shared/db/users.ts";
import type { Config } from "../../../shared/config.ts";
import { AppError, conflict, invalid } from "../../../shared/errors.ts";
import { connectionProblem } from "../../../shared/git/connectionState.ts";
import { environmentRepository, type GitTarget } from "../../../shared/gitops/run.ts";
import { findGenerationCommit, insertGitOperation } from "../../../shared/gitops/store.ts";
import { findConnection } from "../../../shared/git/store.ts";
import { currentUser } from "../../context.ts";
import { projectForDeploy } from "../../policies/deployment.ts";
import { answer, startRun } from "../deployments/actions.router.ts";
import { startedResponse } from "../deployments/deployments.schema.ts";
import { projectParams } from "../projects/projects.schema.ts";
import { defineRoute } from "../route.ts";
import { projectStateResponses } from "../projectStates.ts";

const tags = ["Git"];
const id = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
/** `owner/name` (GitLab: `group/subgroup/name`, or the numeric project id). */
const repository = z
  .string()
  .trim()
  .max(255)
  .regex(/^(\d+|[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)+)$/, { error: 'The repository must look like "owner/name".' });

const target = {
  code_generation_id: id,
  connection_id: id.optional(),
  environment_id: id.optional(),
  repository: repository.optional(),
  branch: branchName,
};
const oneAccess = (body: { connection_id?: number | undefined; environment_id?: number | undefined; repository?: string | undefined }, ctx: z.RefinementCtx) => {
  if ((body.connection_id === undefined) === (body.environment_id === undefined)) {
    ctx.addIssue({ code: "custom", path: ["connection_id"], message: "Give a connection id or an environment id (one of them)." });
  }
  if (body.connection_id !== undefined && !body.repository) ctx.addIssue({ code: "custom", path: ["repository"], message: "The repository field is required with a connection id." });
};
/**
 * The commit message. It may not hold the service's trailer line: an operation recognises its
 * own commit by it (Bitbucket, and retries), so a message naming another operation's id would
 * make that one take this commit for its own and commit nothing.
 */
const message = z
  .string()
  .trim()
  .min(1)
  .max(5000)
  .refine((value) => !/^\s*SchemaForge-Operation\s*:/im.test(value), { error: "The message must not hold a SchemaForge-Operation line; the service adds its own." });
const commitBody = z.object({ ...target, message }).superRefine(oneAccess);
const pushBody = z.object(target).superRefine(oneAccess);
type Body = z.output<typeof pushBody>;

/** Checks the generation, the access and the repository; what the row records. @throws 422, 404, 403, 423, 402, 409 */
async function resolve(tx: CommonQueryMethods, config: Config, projectId: number, user: UserRow, body: Body) {
  const project = await projectForDeploy(tx, projectId, user);
  const generation = await tx.maybeOneFirst(
    sql.type(z.object({ id: z.number() }))`select id from code_generations where id = ${body.code_generation_id} and project_id = ${project.id}`,
  );
  if (generation === null) throw invalid({ code_generation_id: ["The project has no such code generation."] });
  if (body.connection_id !== undefined) {
    const connection = await findConnection(tx, body.connection_id);
    if (!connection || connection.user_id !== user.id) throw invalid({ connection_id: ["You have no git connection with this id."] });
    // Said now rather than by a run that fails: connect again first (422, not 401, which
    // would read as this API's own sign-in having expired).
    const problem = connectionProblem(config, connection);
    if (problem) throw new AppError(422, problem.code, problem.message, { connection_id: [problem.message] });
    return { project, connectionId: connection.id, environment: null, provider: connection.provider, repository: body.repository! };
  }
  const env: EnvironmentRow | null = await findEnvironment(tx, body.environment_id!);
  if (!env || env.project_id !== project.id) throw invalid({ environment_id: ["The project has no such environment."] });
  if (!env.git_config) throw invalid({ environment_id: [`The environment "${env.name}" has no git configuration.`] });
  const provider = detectGitProvider(env.git_config);
  if (!provider) throw invalid({ environment_id: [`The environment "${env.name}" has no usable git configuration.`] });
  // The environment's token (or connection) was set up by a manager for its repository; a
  // member who may deploy does not get to send it to another repository it happens to reach.
  const own = environmentRepository(env.git_config);
  if (body.repository !== undefined && body.repository.toLowerCase() !== own.toLowerCase()) {
    throw invalid({ repository: [`A commit or push through an environment goes to the environment's repository (${own}); leave the repository out, or use a git connection of your own.`] });
  }
  return { project, connectionId: null, environment: { id: env.id, type: env.type }, provider, repository: own };
}

/** Records and queues a commit or push, and answers 202. */
async function queue(ctx: Parameters<typeof answer>[0], operation: "commit" | "push", projectId: number, body: Body & { message?: string }): Promise<void> {
  const user = currentUser(ctx);
  const started = await ctx.deps.pool.transaction(async (tx) => {
    const resolved = await resolve(tx, ctx.deps.config, projectId, user, body);
    const gitTarget: GitTarget = { provider: resolved.provider, repository: resolved.repository, branch: body.branch };
    if (operation === "commit") gitTarget.message = body.message!;
    else {
      const commit = await findGenerationCommit(tx, body.code_generation_id, resolved.provider, resolved.repository);
      if (!commit) throw invalid({ code_generation_id: [`Code generation ${body.code_generation_id} has no commit in ${resolved.repository} yet; commit it first.`] });
      gitTarget.commit = commit;
    }
    // The environment's row lock, as an execute takes it (actions.router.ts), so that runs
    // sent at once see each other and only one is queued.
    if (resolved.environment) await tx.query(sql.type(ignoredRow)`select 1 from environments where id = ${resolved.environment.id} for update`);
    if (resolved.environment && (await environmentBusy(tx, resolved.environment.id, 0))) {
      throw conflict("Another deployment to this environment is queued or running; wait for it to finish.", "deployment_in_progress");
    }
    const rowId = await insertGitOperation(tx, {
      operation,
      projectId: resolved.project.id,
      codeGenerationId: body.code_generation_id,
      userId: user.id,
      target: gitTarget,
      connectionId: resolved.connectionId,
      environment: resolved.environment,
    });
    return startRun(tx, (await findDeployment(tx, rowId))!, user);
  });
  answer(ctx, started, operation === "commit" ? "Commit queued." : "Push queued.");
}

/** A commit or push is a deployment: refused in a locked, expired or archived project, and while its environment is busy. */
const refusals = {
  ...projectStateResponses,
  409: { description: "Another deployment to the environment is queued or running (`deployment_in_progress`); or the project is archived (`project_archived`)" },
};

const commit = defineRoute({
  method: "post",
  path: "/projects/{projectId}/git/commit",
  summary: "Commit a generation's files to a branch (no pull request)",
  description:
    "`{code_generation_id, connection_id + repository | environment_id, branch, message}`. One commit of all the generation's files on `branch`, created from the repository's default branch when missing (through an environment, always the environment's repository); files already identical are not committed again (a retried job finds its commit by the same tree). Runs as a deployment with operation `commit`.",
  tags,
  auth: "bearer",
  params: projectParams,
  body: commitBody,
  responses: { 202: { description: "Queued", schema: startedResponse }, ...refusals },
  handler: (ctx, { params, body }) => queue(ctx, "commit", params.projectId, body),
});

const push = defineRoute({
  method: "post",
  path: "/projects/{projectId}/git/push",
  summary: "Point another branch at the commit a generation got",
  description:
    "`{code_generation_id, connection_id + repository | environment_id, branch}`. Takes the commit of the generation's latest successful commit to that repository and creates `branch` there (GitHub also moves an existing branch forward; a branch that would be overwritten is refused). Runs as a deployment with operation `push`.",
  tags,
  auth: "bearer",
  params: projectParams,
  body: pushBody,
  responses: { 202: { description: "Queued", schema: startedResponse }, ...refusals },
  handler: (ctx, { params, body }) => queue(ctx, "push", params.projectId, body),
});

export const gitOperationRoutes = [commit, push];
