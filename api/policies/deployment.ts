/**
 * Deployment area policy (environments, deployments, their logs, outbound webhooks).
 *
 * - Read: whoever sees the project (owner, any team role, site admins). Anyone else,
 *   a public project's visitors included, gets 404: `is_public` only lists a project in the
 *   gallery and shows nothing inside it.
 * - Run deployments (create, execute, retry, rollback): whoever edits the project's content.
 * - Configure (environments, webhooks, clearing logs, testing a stored environment's
 *   connection): whoever manages the project.
 */
import type { ProjectRow } from "../../shared/db/projects.ts";
import type { CommonQueryMethods } from "../../shared/db/pool.ts";
import type { UserRow } from "../../shared/db/users.ts";
import { projectForRead, projectForWrite } from "./projectGuard.ts";

/** The project if the caller may read its deployment area: whoever sees the project. @throws 404 */
export const projectForDeploymentRead = (conn: CommonQueryMethods, projectId: number, user: UserRow): Promise<ProjectRow> =>
  projectForRead(conn, projectId, user);

/** Deploying: the right to change the project's content. @throws 404, 403, 423, 402, 409 */
export const projectForDeploy = (tx: CommonQueryMethods, projectId: number, user: UserRow) => projectForWrite(tx, projectId, user, "content");

/** Configuring deployments and webhooks: the right to manage the project. @throws 404, 403, 423, 402, 409 */
export const projectForDeploymentConfig = (tx: CommonQueryMethods, projectId: number, user: UserRow) => projectForWrite(tx, projectId, user, "manage");
