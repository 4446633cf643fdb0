/**
 * Loading a deployment with its project's deployment policy (api/policies/deployment.ts):
 * 404 for whoever does not see the project, 403 for who sees it but may not do this.
 */
import type { CommonQueryMethods } from "../../../shared/db/pool.ts";
import type { ProjectRow } from "../../../shared/db/projects.ts";
import type { UserRow } from "../../../shared/db/users.ts";
import { findDeployment, type DeploymentRow } from "../../../shared/deployments/records.ts";
import { notFound } from "../../../shared/errors.ts";
import { projectForDeploy, projectForDeploymentConfig, projectForDeploymentRead } from "../../policies/deployment.ts";

/** A deployment the caller may see. @throws 404, 403 */
export async function deploymentForRead(conn: CommonQueryMethods, id: number, user: UserRow): Promise<{ deployment: DeploymentRow; project: ProjectRow }> {
  const deployment = await findDeployment(conn, id);
  if (!deployment) throw notFound("Deployment");
  try {
    return { deployment, project: await projectForDeploymentRead(conn, deployment.project_id, user) };
  } catch (error) {
    if ((error as { status?: number }).status === 404) throw notFound("Deployment");
    throw error;
  }
}

/**
 * A deployment, row-locked, that the caller may act on: `deploy` (execute, retry,
 * rollback) or `config` (clear its logs). @throws 404, 403, 423, 402, 409
 */
export async function deploymentForAction(tx: CommonQueryMethods, id: number, user: UserRow, action: "deploy" | "config"): Promise<DeploymentRow> {
  const { deployment } = await deploymentForRead(tx, id, user);
  await (action === "deploy" ? projectForDeploy : projectForDeploymentConfig)(tx, deployment.project_id, user);
  return (await findDeployment(tx, id, true))!;
}
