/**
 * Job policy: a job record belongs to the user who started it; site admins see all.
 * Its owner may cancel it, except a job the owner did not ask for but is only told of
 * or paid by: a notice (an e-mail, such as the old address's notice of an e-mail change,
 * or a push) must reach them even from a session in other hands, and a payout's job is
 * what settles the payout (cancelled, the payout would stay requested and hold the
 * earnings for good). Those only an administrator may cancel.
 */
import type { UserRow } from "../../shared/db/users.ts";
import { emailsSend, payoutsProcess, pushSend } from "../../shared/jobs/kinds.ts";
import type { JobRow } from "../../shared/jobs/records.ts";
import { isSiteAdmin } from "./roles.ts";

const NOT_OWNER_CANCELLABLE: ReadonlySet<string> = new Set([emailsSend.name, pushSend.name, payoutsProcess.name]);

export const canViewJob = (user: UserRow, job: JobRow) => job.user_id === user.id || isSiteAdmin(user);

export const canCancelJob = (user: UserRow, job: JobRow) => isSiteAdmin(user) || (job.user_id === user.id && !NOT_OWNER_CANCELLABLE.has(job.kind));
