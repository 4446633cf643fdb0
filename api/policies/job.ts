/**
 * Job policy: a job record belongs to the user who started it; site admins see all.
 */
import type { UserRow } from "../../shared/db/users.ts";
import type { JobRow } from "../../shared/jobs/records.ts";
import { isSiteAdmin } from "./roles.ts";

export const canViewJob = (user: UserRow, job: JobRow) => job.user_id === user.id || isSiteAdmin(user);

export const canCancelJob = (user: UserRow, job: JobRow) => job.user_id === user.id || isSiteAdmin(user);
