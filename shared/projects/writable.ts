/**
 * Whether a project accepts changes now, with the statuses the spec fixes: locked 423,
 * subscription expired 402 (the soft lock), archived 409, deleted 404.
 *
 * Routes check this through api/policies/projectGuard.ts when the request arrives. Jobs that
 * write content into a project (applying a parsed schema, recording a code generation) check
 * it again inside the transaction that writes, because the project may have been locked,
 * archived or deleted, or its subscription may have run out, between the request and the
 * job. Both take the project row lock the same way (FOR SHARE for content, while locking a
 * project takes FOR UPDATE), so a content write and a lock serialise: whichever commits
 * first, the other sees it.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";
import { latestSubscriptionJoin, subscriptionExpired } from "../db/projects.ts";
import { AppError, notFound } from "../errors.ts";

export const projectLocked = () => new AppError(423, "project_locked", "The project is locked; unlock it to make changes.");
export const subscriptionExpiredError = () =>
  new AppError(402, "subscription_expired", "The project's subscription has expired; renew it to make changes.");
export const projectArchived = () => new AppError(409, "project_archived", "The project is archived; unarchive it to make changes.");

/** The states of a project a change may be allowed in anyway (unlocking, renewing, unarchiving, deleting). */
export interface StateExemptions {
  /** The change may run on a locked project (unlock). */
  allowLocked?: boolean;
  /** The change may run when the subscription expired (renewing, unlocking, deleting). */
  allowExpired?: boolean;
  /** The change may run on an archived project (unarchive, delete). */
  allowArchived?: boolean;
}

/** What the state check reads of a project row. */
export interface ProjectState {
  is_locked: boolean;
  archived_at: Date | null;
  subscription_expires_at: Date | null;
}

/** The refusal of a change to a project in `project`'s state (locked, then expired, then archived), or null. */
export function projectStateError(project: ProjectState, exempt: StateExemptions = {}): AppError | null {
  if (project.is_locked && !exempt.allowLocked) return projectLocked();
  if (subscriptionExpired(project) && !exempt.allowExpired) return subscriptionExpiredError();
  if (project.archived_at && !exempt.allowArchived) return projectArchived();
  return null;
}

const stateRow = z.object({ is_locked: z.boolean(), archived_at: z.date().nullable(), subscription_expires_at: z.date().nullable() });

/**
 * Share-locks project `projectId` for a content write by a job (call inside the writing
 * transaction) and returns why the write must not happen: 404 when the project is gone,
 * 423/402/409 as a route would answer; null when it may.
 */
export async function lockProjectForContent(tx: CommonQueryMethods, projectId: number): Promise<AppError | null> {
  const project = await tx.maybeOne(sql.type(stateRow)`
    select p.is_locked, p.archived_at, s.expires_at as subscription_expires_at
    from projects p ${latestSubscriptionJoin}
    where p.id = ${projectId} and p.deleted_at is null
    for share of p`);
  if (!project) return notFound("Project");
  return projectStateError(project);
}
