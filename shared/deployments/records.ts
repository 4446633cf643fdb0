/**
 * Deployment records. Status moves pending → running → succeeded | failed; a failed one
 * may be retried (failed → pending → running …, keeping its deployer state); a succeeded one
 * becomes rolled_back when a rollback that supersedes it succeeds.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";
import { environmentTypes } from "./environments.ts";
import { deploymentMethods } from "./targetConfigs.ts";

export const deploymentStatuses = ["pending", "running", "succeeded", "failed", "rolled_back"] as const;
export type DeploymentStatus = (typeof deploymentStatuses)[number];

export const deploymentRow = z.object({
  id: z.number(),
  project_id: z.number(),
  environment_id: z.number().nullable(),
  environment_name: z.string().nullable(),
  environment_type: z.enum(environmentTypes).nullable(),
  code_generation_id: z.number().nullable(),
  deployment_method: z.enum(deploymentMethods),
  /** Null for a commit or push through a git connection (no environment). */
  target_environment: z.enum(environmentTypes).nullable(),
  operation: z.enum(["deploy", "commit", "push"]),
  git_connection_id: z.number().nullable(),
  git_target: z.record(z.string(), z.unknown()).nullable(),
  status: z.enum(deploymentStatuses),
  rollback_of: z.number().nullable(),
  rollback_to: z.number().nullable(),
  rolled_back_by: z.number().nullable(),
  job_id: z.number().nullable(),
  attempts: z.number(),
  result: z.unknown(),
  error: z.string().nullable(),
  error_code: z.string().nullable(),
  user_id: z.number().nullable(),
  user_name: z.string().nullable(),
  user_username: z.string().nullable(),
  logs_count: z.number(),
  created_at: z.date(),
  started_at: z.date().nullable(),
  finished_at: z.date().nullable(),
  updated_at: z.date(),
});
export type DeploymentRow = z.infer<typeof deploymentRow>;

/** Select list and joins of `deploymentRow` over `deployments d`. */
export const deploymentSelect = sql.fragment`
  select d.id, d.project_id, d.environment_id, e.name as environment_name, e.type as environment_type,
    d.code_generation_id, d.deployment_method, d.target_environment, d.operation, d.git_connection_id, d.git_target, d.status,
    d.rollback_of, d.rollback_to, d.rolled_back_by, d.job_id, d.attempts, d.result, d.error, d.error_code,
    d.user_id, u.name as user_name, u.username as user_username,
    (select count(*)::int from deployment_logs l where l.deployment_id = d.id) as logs_count,
    d.created_at, d.started_at, d.finished_at, d.updated_at
  from deployments d
  left join environments e on e.id = d.environment_id
  left join users u on u.id = d.user_id`;

/** One deployment, or null; `lock` row-locks it (FOR UPDATE OF d). */
export async function findDeployment(conn: CommonQueryMethods, id: number, lock = false): Promise<DeploymentRow | null> {
  return conn.maybeOne(sql.type(deploymentRow)`${deploymentSelect} where d.id = ${id} ${lock ? sql.fragment`for update of d` : sql.fragment``}`);
}

/** What a new deployment records. */
export interface NewDeployment {
  projectId: number;
  environmentId: number;
  codeGenerationId: number;
  method: (typeof deploymentMethods)[number];
  targetEnvironment: (typeof environmentTypes)[number];
  userId: number;
  rollbackOf?: number | null;
  rollbackTo?: number | null;
}

/** Inserts a pending deployment; returns its id. */
export async function insertDeployment(conn: CommonQueryMethods, input: NewDeployment): Promise<number> {
  return conn.oneFirst(sql.type(z.object({ id: z.number() }))`
    insert into deployments (project_id, environment_id, code_generation_id, deployment_method, target_environment, user_id, rollback_of, rollback_to)
    values (${input.projectId}, ${input.environmentId}, ${input.codeGenerationId}, ${input.method}, ${input.targetEnvironment},
      ${input.userId}, ${input.rollbackOf ?? null}, ${input.rollbackTo ?? null})
    returning id`);
}

/** Whether another deployment to the environment is queued or running (two runs would race on one target). */
export async function environmentBusy(conn: CommonQueryMethods, environmentId: number, except: number): Promise<boolean> {
  return conn.exists(sql.type(z.object({}))`
    select 1 from deployments
    where environment_id = ${environmentId} and id <> ${except}
      and (status = 'running' or (status = 'pending' and job_id is not null))`);
}

/** What a deployment whose job was cancelled before it ran says (it may be retried). */
export const RUN_CANCELLED = { message: "The deployment's job was cancelled before it ran.", code: "job_cancelled" } as const;

/**
 * Fails the deployment that cancelled job `jobId` was queued to run, so it holds its
 * environment no longer and can be retried; the deployment's id, or null when none waited.
 */
export async function failCancelledRun(conn: CommonQueryMethods, jobId: number): Promise<number | null> {
  return conn.maybeOneFirst(sql.type(z.object({ id: z.number() }))`
    update deployments set status = 'failed', error = ${RUN_CANCELLED.message}, error_code = ${RUN_CANCELLED.code}, finished_at = now(), updated_at = now()
    where job_id = ${jobId} and status = 'pending'
    returning id`);
}
