/**
 * Deployments (spec "Deployments"): create in either request form, the project's history,
 * and one deployment's status. Running them is in actions.router.ts.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../../../shared/db/pool.ts";
import type { EnvironmentRow } from "../../../shared/deployments/environments.ts";
import { environmentRow, environmentSelect } from "../../../shared/deployments/environments.ts";
import { deploymentRow, deploymentSelect, findDeployment, insertDeployment } from "../../../shared/deployments/records.ts";
import type { DeploymentMethod } from "../../../shared/deployments/targetConfigs.ts";
import { invalid, invalidField } from "../../../shared/errors.ts";
import { methodFor } from "./methods.ts";
import { currentUser } from "../../context.ts";
import { paginated, paginatedSchema, pageFragment, paginationQuery } from "../../pagination.ts";
import { projectForDeploy, projectForDeploymentRead } from "../../policies/deployment.ts";
import { registerChannelAuthorizer } from "../../realtime/channelAuth.ts";
import { deploymentResource, presentDeployment } from "../../presenters/deployment.ts";
import { idParams } from "../jobs/jobs.schema.ts";
import { projectParams } from "../projects/projects.schema.ts";
import { defineRoute } from "../route.ts";
import { createDeploymentBody } from "./deployments.schema.ts";
import { environmentForRead } from "./environments.router.ts";
import { deploymentForRead } from "./load.ts";
import { projectStateResponses } from "../projectStates.ts";

const tags = ["Deployments"];

/** The project's environment of `type` configured for `method`, the default one first. @throws 422 */
async function pickEnvironment(conn: CommonQueryMethods, projectId: number, type: EnvironmentRow["type"], method: DeploymentMethod): Promise<EnvironmentRow> {
  const column = sql.identifier(["e", `${method}_config`]);
  const env = await conn.maybeOne(sql.type(environmentRow)`
    ${environmentSelect} where e.project_id = ${projectId} and e.type = ${type} and ${column} is not null
    order by e.is_default desc, e.id limit 1`);
  if (!env) throw invalidField("target_environment", `The project has no ${type} environment with a${method === "ftp" ? "n" : ""} ${method.toUpperCase()} configuration.`);
  return env;
}

const create = defineRoute({
  method: "post",
  path: "/deployments",
  summary: "Create a deployment of a code generation",
  description:
    "Either `project_id`, `deployment_method` and `target_environment` (the project's environment of that type configured for the method, its default environment first) or `environment_id` (plus `deployment_method` when the environment has several configurations). The deployment is `pending` until executed.",
  tags,
  auth: "bearer",
  body: createDeploymentBody,
  responses: { ...projectStateResponses,
    201: { description: "Created (pending)", schema: z.object({ message: z.string(), deployment: deploymentResource }) },
    404: { description: "The project, environment or code generation is not visible to the caller" },
  },
  handler: async (ctx, { body }) => {
    const { pool } = ctx.deps;
    const user = currentUser(ctx);
    const id = await pool.transaction(async (tx) => {
      let env: EnvironmentRow;
      let method: DeploymentMethod;
      if (body.environment_id !== undefined) {
        env = await environmentForRead(tx, body.environment_id, user);
        if (body.project_id !== undefined && body.project_id !== env.project_id) {
          throw invalidField("project_id", "The project id does not match the environment's project.");
        }
        method = methodFor(env, body.deployment_method);
        if (body.target_environment && body.target_environment !== env.type) {
          throw invalidField("target_environment", `The environment "${env.name}" is a ${env.type} environment.`);
        }
      } else {
        const project = await projectForDeploymentRead(tx, body.project_id!, user);
        method = body.deployment_method!;
        env = await pickEnvironment(tx, project.id, body.target_environment!, method);
      }
      const project = await projectForDeploy(tx, env.project_id, user);
      const generationProject = await tx.maybeOneFirst(sql.type(z.object({ project_id: z.number() }))`
        select project_id from code_generations where id = ${body.code_generation_id}`);
      if (generationProject !== project.id) {
        throw invalid({ code_generation_id: ["The selected code generation does not exist in this project."] });
      }
      return insertDeployment(tx, {
        projectId: project.id,
        environmentId: env.id,
        codeGenerationId: body.code_generation_id,
        method,
        targetEnvironment: env.type,
        userId: user.id,
      });
    });
    ctx.status = 201;
    ctx.body = { message: "Deployment created.", deployment: presentDeployment((await findDeployment(pool, id))!) };
  },
});

const history = defineRoute({
  method: "get",
  path: "/projects/{projectId}/deployments",
  summary: "The deployment history of a project, newest first",
  tags,
  auth: "bearer",
  params: projectParams,
  query: paginationQuery,
  responses: { 200: { description: "A page of deployments", schema: paginatedSchema(deploymentResource) } },
  handler: async (ctx, { params, query }) => {
    const { pool } = ctx.deps;
    const project = await projectForDeploymentRead(pool, params.projectId, currentUser(ctx));
    const [rows, total] = await Promise.all([
      pool.any(sql.type(deploymentRow)`${deploymentSelect} where d.project_id = ${project.id} order by d.id desc ${pageFragment(query)}`),
      pool.oneFirst(sql.type(z.object({ count: z.number() }))`select count(*)::int as count from deployments where project_id = ${project.id}`),
    ]);
    ctx.body = paginated(rows.map(presentDeployment), total, query, new URL(ctx.href));
  },
});

const show = defineRoute({
  method: "get",
  path: "/deployments/{id}",
  summary: "A deployment's status",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { 200: { description: "The deployment", schema: z.object({ deployment: deploymentResource }) } },
  handler: async (ctx, { params }) => {
    const { deployment } = await deploymentForRead(ctx.deps.pool, params.id, currentUser(ctx));
    ctx.body = { deployment: presentDeployment(deployment) };
  },
});

// Channel `private-deployment.{id}` (LogAdded, DeploymentCompleted): whoever may see the deployment.
registerChannelAuthorizer("private-deployment.", async (deps, user, id) => {
  if (!/^\d{1,15}$/.test(id)) return false;
  try {
    await deploymentForRead(deps.pool, Number(id), user);
    return true;
  } catch {
    return false;
  }
});

export const deploymentRoutes = [create, history, show];
