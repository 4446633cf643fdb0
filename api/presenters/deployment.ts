/**
 * The deployment resource (the spec shows its creation inputs only): the creation inputs,
 * the status with its timestamps, the outcome (the deployer's result or the error), the
 * rollback links and the number of log rows.
 */
import { z } from "zod";
import { environmentTypes } from "../../shared/deployments/environments.ts";
import { deploymentStatuses, type DeploymentRow } from "../../shared/deployments/records.ts";
import { deploymentMethods } from "../../shared/deployments/targetConfigs.ts";

export const deploymentResource = z.object({
  id: z.number(),
  project_id: z.number(),
  environment_id: z.number().nullable(),
  environment: z.object({ id: z.number(), name: z.string(), type: z.enum(environmentTypes) }).nullable(),
  code_generation_id: z.number().nullable(),
  deployment_method: z.enum(deploymentMethods),
  target_environment: z.enum(environmentTypes).nullable(),
  /** `deploy`, or `commit` / `push` (POST /projects/{p}/git/commit|push) with their `git_target`. */
  operation: z.enum(["deploy", "commit", "push"]),
  git_target: z
    .object({ provider: z.string(), repository: z.string(), branch: z.string(), message: z.string().optional(), connection_id: z.number().nullable().optional() })
    .nullable(),
  status: z.enum(deploymentStatuses),
  rollback_of: z.number().nullable(),
  rollback_to: z.number().nullable(),
  rolled_back_by: z.number().nullable(),
  job_id: z.number().nullable(),
  attempts: z.number(),
  result: z.unknown(),
  error: z.string().nullable(),
  error_code: z.string().nullable(),
  user: z.object({ id: z.number(), name: z.string(), username: z.string() }).nullable(),
  logs_count: z.number(),
  created_at: z.string(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
});
export type DeploymentResource = z.infer<typeof deploymentResource>;

/** A deployment. */
export function presentDeployment(row: DeploymentRow): DeploymentResource {
  return {
    id: row.id,
    project_id: row.project_id,
    environment_id: row.environment_id,
    environment:
      row.environment_id !== null && row.environment_name !== null && row.environment_type !== null
        ? { id: row.environment_id, name: row.environment_name, type: row.environment_type }
        : null,
    code_generation_id: row.code_generation_id,
    deployment_method: row.deployment_method,
    target_environment: row.target_environment,
    operation: row.operation,
    git_target: row.git_target === null ? null : { ...(row.git_target as { provider: string; repository: string; branch: string; message?: string }), connection_id: row.git_connection_id },
    status: row.status,
    rollback_of: row.rollback_of,
    rollback_to: row.rollback_to,
    rolled_back_by: row.rolled_back_by,
    job_id: row.job_id,
    attempts: row.attempts,
    result: row.result ?? null,
    error: row.error,
    error_code: row.error_code,
    user: row.user_id === null ? null : { id: row.user_id, name: row.user_name ?? "", username: row.user_username ?? "" },
    logs_count: row.logs_count,
    created_at: row.created_at.toISOString(),
    started_at: row.started_at?.toISOString() ?? null,
    finished_at: row.finished_at?.toISOString() ?? null,
  };
}
