/**
 * Job policy: a job record belongs to the user who started it; site admins see all.
 * Its owner may cancel it while it is queued only when its kind says so
 * (`ownerMayCancel`, shared/jobs/kinds.ts): a job the owner did not ask for but is only
 * told of or paid by must run even when a session in other hands asks to stop it — a
 * notice (an e-mail, such as the old address's notice of an e-mail change, or a push)
 * must reach them, and a payout's job is what settles the payout. A kind that does not
 * say, or a record naming a kind this process does not know, is an administrator's to cancel.
 *
 * The result of a project's job is project content (a generation's files, a preview, a
 * parse's counts), and so are its error and progress messages (a template error quotes
 * template text and file names): its owner reads them only while they may read the
 * project, as anything else in it; one who left the project's team keeps the record
 * (status, progress, error code, times) without them.
 */
import type { ProjectRow } from "../../shared/db/projects.ts";
import type { UserRow } from "../../shared/db/users.ts";
import { jobKindNamed } from "../../shared/jobs/kind.ts";
import "../../shared/jobs/kinds.ts";
import type { JobRow } from "../../shared/jobs/records.ts";
import { canViewProject } from "./project.ts";
import { isSiteAdmin } from "./roles.ts";

export const canViewJob = (user: UserRow, job: JobRow) => job.user_id === user.id || isSiteAdmin(user);

export const canCancelJob = (user: UserRow, job: JobRow) =>
  isSiteAdmin(user) || (job.user_id === user.id && jobKindNamed(job.kind)?.ownerMayCancel === true);

/**
 * Whether the caller may read the content of `job` (result, error and progress messages);
 * `project` is the job's project as the caller sees it (null when it is gone), needed only
 * for a project's job.
 */
export const canReadJobContent = (user: UserRow, job: Pick<JobRow, "project_id">, project: Pick<ProjectRow, "access" | "owner_id"> | null) =>
  job.project_id === null || isSiteAdmin(user) || (project !== null && canViewProject(user, project));
