/**
 * Deployment area policy (environments, deployments, their logs, outbound webhooks).
 *
 * - Read: the project's members (owner, any team role) and site admins. A public project's
 *   visitors see the project but not where and how it is deployed (hosts, user names,
 *   webhook URLs): 403.
 * - Run deployments (create, execute, retry, rollback): whoever edits the project's content.
 * - Configure (environments, webhooks, clearing logs, testing a stored environment's
 *   connection): whoever manages the project.
 */
import type { ProjectRow } from "../../shared/db/projects.ts";
import type { CommonQueryMethods } from "../../shared/db/pool.ts";
import type { UserRow } from "../../shared/db/users.ts";
import { forbidden } from "../../shared/errors.ts";
import { projectForRead, projectForWrite } from "./projectGuard.ts";
import { isSiteAdmin } from "./roles.ts";

/** Whether `user` may see a project's deployment settings and history. */
export const canViewDeployments = (user: UserRow, project: Pick<ProjectRow, "access">) => project.access !== null || isSiteAdmin(user);

/** The project if the caller may read its deployment area. @throws 404, 403 */
export async function projectForDeploymentRead(conn: CommonQueryMethods, projectId: number, user: UserRow): Promise<ProjectRow> {
  const project = await projectForRead(conn, projectId, user);
  if (!canViewDeployments(user, project)) throw forbidden("Only the project's members see its deployments.");
  return project;
}

/** Deploying: the right to change the project's content. @throws 404, 403, 423, 402, 409 */
export const projectForDeploy = (tx: CommonQueryMethods, projectId: number, user: UserRow) => projectForWrite(tx, projectId, user, "content");

/** Configuring deployments and webhooks: the right to manage the project. @throws 404, 403, 423, 402, 409 */
export const projectForDeploymentConfig = (tx: CommonQueryMethods, projectId: number, user: UserRow) => projectForWrite(tx, projectId, user, "manage");
