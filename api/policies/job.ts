/**
 * Job policy: a job record belongs to the user who started it; site admins see all.
 * Its owner may cancel it while it is queued only when its kind says so
 * (`ownerMayCancel`, shared/jobs/kinds.ts): a job the owner did not ask for but is only
 * told of or paid by must run even when a session in other hands asks to stop it — a
 * notice (an e-mail, such as the old address's notice of an e-mail change, or a push)
 * must reach them, and a payout's job is what settles the payout. A kind that does not
 * say, or a record naming a kind this process does not know, is an administrator's to cancel.
 */
import type { UserRow } from "../../shared/db/users.ts";
import { jobKindNamed } from "../../shared/jobs/kind.ts";
import "../../shared/jobs/kinds.ts";
import type { JobRow } from "../../shared/jobs/records.ts";
import { isSiteAdmin } from "./roles.ts";

export const canViewJob = (user: UserRow, job: JobRow) => job.user_id === user.id || isSiteAdmin(user);

export const canCancelJob = (user: UserRow, job: JobRow) =>
  isSiteAdmin(user) || (job.user_id === user.id && jobKindNamed(job.kind)?.ownerMayCancel === true);
