/**
 * Loading threads and messages for a route: whoever may view a thread's project reads the
 * thread and posts in it (messages are talk about the project, not its content, so a
 * viewer may post and a locked project still talks). Hidden projects answer 404 under the
 * thread's or message's name.
 */
import type { CommonQueryMethods } from "../../../shared/db/pool.ts";
import type { ProjectRow } from "../../../shared/db/projects.ts";
import type { UserRow } from "../../../shared/db/users.ts";
import { notFound } from "../../../shared/errors.ts";
import { listMessageAttachments } from "../../../shared/attachments/store.ts";
import { findMessage, findThread, type MessageRow, type ThreadRow } from "../../../shared/messages/store.ts";
import { projectForRead } from "../../policies/projectGuard.ts";
import type { LinkSigner } from "../../presenters/attachment.ts";
import { presentMessage } from "../../presenters/message.ts";
import { hiddenAs } from "../kanban/load.ts";

/** A thread the caller may read. @throws 404 */
export async function threadForRead(conn: CommonQueryMethods, id: number, user: UserRow): Promise<{ thread: ThreadRow; project: ProjectRow }> {
  const thread = await findThread(conn, id, user.id);
  if (!thread) throw notFound("Thread");
  const project = await hiddenAs("Thread", () => projectForRead(conn, thread.project_id, user));
  return { thread, project };
}

/** A message in a thread the caller may read. @throws 404 */
export async function messageForRead(conn: CommonQueryMethods, id: number, user: UserRow): Promise<{ message: MessageRow & { project_id: number }; project: ProjectRow }> {
  const message = await findMessage(conn, id);
  if (!message) throw notFound("Message");
  const project = await hiddenAs("Message", () => projectForRead(conn, message.project_id, user));
  return { message, project };
}

/** Messages with their attachments, presented. */
export async function presentMessages(conn: CommonQueryMethods, rows: readonly MessageRow[], sign: LinkSigner) {
  const attachments = await listMessageAttachments(conn, rows.map((m) => m.id));
  return rows.map((row) => presentMessage(row, attachments.filter((a) => a.message_id === row.id), sign));
}
