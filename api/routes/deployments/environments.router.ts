/**
 * Deployment environments of a project (spec "Deployments": POST|GET
 * /projects/{id}/environments, PUT|DELETE /environments/{id}). Configs are validated with
 * the deployers' schemas, their hosts checked by the network guard, their secrets sealed
 * and never returned. At most one environment per project is the default.
 */
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods } from "../../../shared/db/pool.ts";
import type { UserRow } from "../../../shared/db/users.ts";
import {
  environmentRow,
  environmentSelect,
  findEnvironment,
  openEnvironmentSecrets,
  storedConfigs,
  type EnvironmentRow,
} from "../../../shared/deployments/environments.ts";
import { conflict, notFound } from "../../../shared/errors.ts";
import { currentUser } from "../../context.ts";
import { projectForDeploymentConfig, projectForDeploymentRead } from "../../policies/deployment.ts";
import { environmentResource, presentEnvironment } from "../../presenters/environment.ts";
import { idParams } from "../jobs/jobs.schema.ts";
import { projectParams } from "../projects/projects.schema.ts";
import { defineRoute } from "../route.ts";
import { configAssignments, type Assignments } from "./environmentInput.ts";
import { createEnvironmentBody, updateEnvironmentBody } from "./environments.schema.ts";
import { projectStateResponses } from "../projectStates.ts";

const tags = ["Deployments"];
const one = z.object({ message: z.string(), environment: environmentResource });

/** An environment the caller may read. @throws 404, 403 */
export async function environmentForRead(conn: CommonQueryMethods, id: number, user: UserRow): Promise<EnvironmentRow> {
  const env = await findEnvironment(conn, id);
  if (!env) throw notFound("Environment");
  try {
    await projectForDeploymentRead(conn, env.project_id, user);
  } catch (error) {
    if ((error as { status?: number }).status === 404) throw notFound("Environment");
    throw error;
  }
  return env;
}

/** An environment whose project the caller may configure, the project row-locked. @throws 404, 403, 423, 402, 409 */
export async function environmentForConfig(tx: CommonQueryMethods, id: number, user: UserRow): Promise<EnvironmentRow> {
  const env = await environmentForRead(tx, id, user);
  await projectForDeploymentConfig(tx, env.project_id, user);
  return (await findEnvironment(tx, id))!;
}

async function clearDefault(tx: CommonQueryMethods, projectId: number, except: number | null): Promise<void> {
  await tx.query(sql.type(ignoredRow)`
    update environments set is_default = false, updated_at = now()
    where project_id = ${projectId} and is_default and id is distinct from ${except}`);
}

const setList = (assignments: Assignments) =>
  sql.join(
    [...assignments].map(([column, value]) => sql.fragment`${sql.identifier([column])} = ${value}`),
    sql.fragment`, `,
  );

const list = defineRoute({
  method: "get",
  path: "/projects/{projectId}/environments",
  summary: "The deployment environments of a project",
  tags,
  auth: "bearer",
  params: projectParams,
  responses: { 200: { description: "The environments, default first", schema: z.object({ environments: z.array(environmentResource) }) } },
  handler: async (ctx, { params }) => {
    const { pool } = ctx.deps;
    const project = await projectForDeploymentRead(pool, params.projectId, currentUser(ctx));
    const rows = await pool.any(sql.type(environmentRow)`${environmentSelect} where e.project_id = ${project.id} order by e.is_default desc, e.id`);
    ctx.body = { environments: rows.map(presentEnvironment) };
  },
});

const create = defineRoute({
  method: "post",
  path: "/projects/{projectId}/environments",
  summary: "Create a deployment environment",
  description:
    "Configs (`ftp_config`, `ssh_config`, `git_config`) use the spec's fields; their secrets are stored encrypted and answered only as `has_password`, `has_private_key`, `has_access_token` or `has_app_password`. Hosts and self-hosted URLs that resolve to loopback, private or metadata addresses are refused unless ALLOW_PRIVATE_NETWORK_TARGETS is true.",
  tags,
  auth: "bearer",
  params: projectParams,
  body: createEnvironmentBody,
  responses: { ...projectStateResponses, 201: { description: "Created", schema: one } },
  handler: async (ctx, { params, body }) => {
    const { pool, config } = ctx.deps;
    const user = currentUser(ctx);
    await projectForDeploymentRead(pool, params.projectId, user);
    const assignments = await configAssignments(body, null, config, { conn: pool, userId: user.id });
    const env = await pool.transaction(async (tx) => {
      const project = await projectForDeploymentConfig(tx, params.projectId, user);
      const hasDefault = await tx.exists(sql.type(ignoredRow)`select 1 from environments where project_id = ${project.id} and is_default`);
      const isDefault = body.is_default ?? !hasDefault;
      if (isDefault) await clearDefault(tx, project.id, null);
      assignments.set("project_id", sql.fragment`${project.id}`);
      assignments.set("name", sql.fragment`${body.name}`);
      assignments.set("type", sql.fragment`${body.type}`);
      assignments.set("is_default", sql.fragment`${isDefault}`);
      const columns = [...assignments.keys()].map((c) => sql.identifier([c]));
      const id = await tx.oneFirst(sql.type(z.object({ id: z.number() }))`
        insert into environments (${sql.join(columns, sql.fragment`, `)})
        values (${sql.join([...assignments.values()], sql.fragment`, `)}) returning id`);
      return (await findEnvironment(tx, id))!;
    });
    ctx.status = 201;
    ctx.body = { message: "Environment created.", environment: presentEnvironment(env) };
  },
});

const update = defineRoute({
  method: "put",
  path: "/environments/{id}",
  summary: "Update a deployment environment",
  description:
    "Fields that are omitted keep their values. A config that is given replaces the stored one, except that a secret it omits is kept; `null` removes a config or a secret. Changing an SSH config's host or port drops the pinned host key unless `host_key_fingerprint` is given. An FTP config keeps its `secure` when it omits it; turning `secure` off while a password is stored needs the password again (422), so a password entered for FTPS is never sent in the clear unasked.",
  tags,
  auth: "bearer",
  params: idParams,
  body: updateEnvironmentBody,
  responses: { ...projectStateResponses, 200: { description: "Updated", schema: one } },
  handler: async (ctx, { params, body }) => {
    const { pool, config } = ctx.deps;
    const user = currentUser(ctx);
    const current = await environmentForRead(pool, params.id, user);
    const stored = storedConfigs(current, await openEnvironmentSecrets(pool, config.appKey, current.id));
    const assignments = await configAssignments(body, stored, config, { conn: pool, userId: user.id });
    const env = await pool.transaction(async (tx) => {
      const locked = await environmentForConfig(tx, params.id, user);
      if (locked.updated_at.getTime() !== current.updated_at.getTime()) {
        throw conflict("The environment changed while this update was prepared; send it again.");
      }
      if (body.name !== undefined) assignments.set("name", sql.fragment`${body.name}`);
      if (body.type !== undefined) assignments.set("type", sql.fragment`${body.type}`);
      if (body.is_default !== undefined) {
        if (body.is_default) await clearDefault(tx, locked.project_id, locked.id);
        assignments.set("is_default", sql.fragment`${body.is_default}`);
      }
      assignments.set("updated_at", sql.fragment`now()`);
      await tx.query(sql.type(ignoredRow)`update environments set ${setList(assignments)} where id = ${locked.id}`);
      return (await findEnvironment(tx, locked.id))!;
    });
    ctx.body = { message: "Environment updated.", environment: presentEnvironment(env) };
  },
});

const remove = defineRoute({
  method: "delete",
  path: "/environments/{id}",
  summary: "Delete a deployment environment",
  description: "Refused with 409 while a deployment to it is queued or running. Past deployments stay in the history.",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { ...projectStateResponses, 200: { description: "Deleted", schema: z.object({ message: z.string() }) } },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    await ctx.deps.pool.transaction(async (tx) => {
      const env = await environmentForConfig(tx, params.id, user);
      // The same row lock an execute holds across its busy check, so a delete and an execute
      // of this environment are serialised: one sees the other's outcome.
      await tx.query(sql.type(ignoredRow)`select 1 from environments where id = ${env.id} for update`);
      const busy = await tx.exists(sql.type(ignoredRow)`
        select 1 from deployments where environment_id = ${env.id} and (status = 'running' or (status = 'pending' and job_id is not null))`);
      if (busy) throw conflict("A deployment to this environment is queued or running; wait for it to finish.", "deployment_in_progress");
      await tx.query(sql.type(ignoredRow)`delete from environments where id = ${env.id}`);
    });
    ctx.body = { message: "Environment deleted." };
  },
});

export const environmentRoutes = [list, create, update, remove];
