/**
 * Message threads and messages of projects (spec "Messages") in the database. A thread's
 * `latest_message_at` moves with each new message; each reader's newest read message
 * (`message_thread_reads`) gives their unread count: later messages written by others.
 */
import { z } from "zod";
import { accessFragment } from "../db/projects.ts";
import { ignoredRow, sql, type CommonQueryMethods } from "../db/pool.ts";
import { defaultChoice } from "../settings/notificationKinds.ts";

export const threadRow = z.object({
  id: z.number(),
  project_id: z.number(),
  subject: z.string(),
  created_by: z.number().nullable(),
  messages_count: z.number(),
  latest_message_at: z.date(),
  unread_count: z.number(),
  created_at: z.date(),
});
export type ThreadRow = z.infer<typeof threadRow>;

export const messageRow = z.object({
  id: z.number(),
  thread_id: z.number(),
  user_id: z.number().nullable(),
  user_name: z.string().nullable(),
  body: z.string(),
  created_at: z.date(),
  updated_at: z.date(),
});
export type MessageRow = z.infer<typeof messageRow>;

const threadColumns = (userId: number) => sql.fragment`
  t.id, t.project_id, t.subject, t.created_by, t.latest_message_at, t.created_at,
  (select count(*)::int from messages m where m.thread_id = t.id) as messages_count,
  (select count(*)::int from messages m where m.thread_id = t.id and m.user_id is distinct from ${userId}
     and m.id > coalesce((select r.last_read_message_id from message_thread_reads r where r.thread_id = t.id and r.user_id = ${userId}), 0)) as unread_count`;

/** A thread as `userId` sees it (counts, unread), or null. */
export async function findThread(conn: CommonQueryMethods, id: number, userId: number): Promise<ThreadRow | null> {
  return conn.maybeOne(sql.type(threadRow)`select ${threadColumns(userId)} from message_threads t where t.id = ${id}`);
}

/** Where the caller's threads are: projects they own or share through a team (not deleted). */
const callerThreads = (userId: number) => sql.fragment`
  from message_threads t join projects p on p.id = t.project_id
  where p.deleted_at is null and (${accessFragment(userId)}) is not null`;

/** A page of the threads of `userId`'s projects, newest activity first, and how many there are. */
export async function listThreads(conn: CommonQueryMethods, userId: number, limit: number, offset: number): Promise<{ rows: readonly ThreadRow[]; total: number }> {
  const [rows, total] = await Promise.all([
    conn.any(sql.type(threadRow)`
      select ${threadColumns(userId)} ${callerThreads(userId)}
      order by t.latest_message_at desc, t.id desc limit ${limit} offset ${offset}`),
    conn.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n ${callerThreads(userId)}`),
  ]);
  return { rows, total };
}

/** Creates a thread with its first message; returns both ids. */
export async function insertThread(tx: CommonQueryMethods, projectId: number, userId: number, subject: string, body: string): Promise<{ threadId: number; messageId: number }> {
  const threadId = await tx.oneFirst(sql.type(z.object({ id: z.number() }))`
    insert into message_threads (project_id, subject, created_by) values (${projectId}, ${subject}, ${userId}) returning id`);
  return { threadId, messageId: await insertMessage(tx, threadId, userId, body) };
}

/** Posts a message (the thread's latest activity moves; the author has read up to it). */
export async function insertMessage(tx: CommonQueryMethods, threadId: number, userId: number, body: string): Promise<number> {
  const id = await tx.oneFirst(sql.type(z.object({ id: z.number() }))`
    insert into messages (thread_id, user_id, body) values (${threadId}, ${userId}, ${body}) returning id`);
  await tx.query(sql.type(ignoredRow)`update message_threads set latest_message_at = now() where id = ${threadId}`);
  await markRead(tx, threadId, userId, id);
  return id;
}

/** Records that `userId` has read `threadId` up to message `messageId` (never backwards). */
export async function markRead(conn: CommonQueryMethods, threadId: number, userId: number, messageId: number): Promise<void> {
  await conn.query(sql.type(ignoredRow)`
    insert into message_thread_reads (thread_id, user_id, last_read_message_id) values (${threadId}, ${userId}, ${messageId})
    on conflict (thread_id, user_id) do update set last_read_message_id = greatest(message_thread_reads.last_read_message_id, excluded.last_read_message_id)`);
}

const messageColumns = sql.fragment`m.id, m.thread_id, m.user_id, u.name as user_name, m.body, m.created_at, m.updated_at`;

/** The messages of a thread, oldest first. */
export async function listMessages(conn: CommonQueryMethods, threadId: number): Promise<readonly MessageRow[]> {
  return conn.any(sql.type(messageRow)`
    select ${messageColumns} from messages m left join users u on u.id = m.user_id where m.thread_id = ${threadId} order by m.id`);
}

/** A message with its thread's project, or null. */
export async function findMessage(conn: CommonQueryMethods, id: number): Promise<(MessageRow & { project_id: number }) | null> {
  return conn.maybeOne(sql.type(messageRow.extend({ project_id: z.number() }))`
    select ${messageColumns}, t.project_id from messages m left join users u on u.id = m.user_id
    join message_threads t on t.id = m.thread_id where m.id = ${id}`);
}

/** Replaces a message's body. */
export async function updateMessage(tx: CommonQueryMethods, id: number, body: string): Promise<void> {
  await tx.query(sql.type(ignoredRow)`update messages set body = ${body}, updated_at = now() where id = ${id}`);
}

/** Deletes a message with its attachments; the thread's latest activity falls back to its newest remaining message. */
export async function deleteMessage(tx: CommonQueryMethods, id: number, threadId: number): Promise<void> {
  await tx.query(sql.type(ignoredRow)`delete from messages where id = ${id}`);
  await tx.query(sql.type(ignoredRow)`
    update message_threads t set latest_message_at = coalesce((select max(created_at) from messages where thread_id = t.id), t.created_at)
    where t.id = ${threadId}`);
}

/** Takes a message's row lock for the rest of the transaction (attachments are counted under it). */
export async function lockMessage(tx: CommonQueryMethods, id: number): Promise<void> {
  await tx.query(sql.type(ignoredRow)`select 1 from messages where id = ${id} for update`);
}

/** How many attachments a message carries. */
export async function countMessageAttachments(conn: CommonQueryMethods, messageId: number): Promise<number> {
  return conn.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from attachments where message_id = ${messageId}`);
}

/** Who is told about a new message: the thread's participants (a reply) or the project's people (a new thread); see shared/messages/notify.ts. */
export type Audience = "participants" | "project";

const recipientRow = z.object({ id: z.number(), push: z.boolean(), email: z.boolean() });

/** A user to tell about a new message, and on which channels. */
export type MessageRecipient = z.infer<typeof recipientRow>;

/** The users to tell about a new message of `authorId` in `threadId`, by push, e-mail or both (see shared/messages/notify.ts). */
export async function listMessageRecipients(conn: CommonQueryMethods, threadId: number, authorId: number, audience: Audience): Promise<readonly MessageRecipient[]> {
  const candidates =
    audience === "participants"
      ? sql.fragment`
          select t.created_by as user_id from message_threads t where t.id = ${threadId}
          union select m.user_id from messages m where m.thread_id = ${threadId}
          union select r.user_id from message_thread_reads r where r.thread_id = ${threadId}`
      : sql.fragment`
          select p.owner_id as user_id from message_threads t join projects p on p.id = t.project_id where t.id = ${threadId}
          union select tm.user_id from message_threads t join team_projects tp on tp.project_id = t.project_id
            join team_members tm on tm.team_id = tp.team_id where t.id = ${threadId}`;
  return conn.any(sql.type(recipientRow)`
    with candidates as (${candidates}), chosen as (
    select u.id,
      exists (select 1 from push_subscriptions s where s.user_id = u.id and (s.expires_at is null or s.expires_at > now()))
        and coalesce((select (us.notifications -> 'message_posted' ->> 'push')::boolean from user_settings us where us.user_id = u.id), ${defaultChoice("message_posted", "push")}) as push,
      coalesce((select (us.notifications -> 'message_posted' ->> 'email')::boolean from user_settings us where us.user_id = u.id), ${defaultChoice("message_posted", "email")}) as email
    from candidates c
      join users u on u.id = c.user_id
      join message_threads t on t.id = ${threadId}
      join projects p on p.id = t.project_id and p.deleted_at is null
    where u.id <> ${authorId} and u.disabled_at is null
      and (p.owner_id = u.id
        or exists (select 1 from team_projects tp join team_members tm on tm.team_id = tp.team_id where tp.project_id = p.id and tm.user_id = u.id)
        or exists (select 1 from user_roles r where r.user_id = u.id and r.role in ('admin', 'super_admin')))
    )
    select id, push, email from chosen where push or email order by id`);
}
