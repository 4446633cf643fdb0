/**
 * Message threads (spec "Messages", DESIGN §11): the caller's threads (those of the projects
 * they own or share through a team), newest activity first with counts and the caller's
 * unread count; a thread with its messages (reading it marks it read); starting a thread
 * with its first message; posting, which publishes `MessagePosted` on
 * `private-message-thread.{threadId}` in the posting transaction. Both queue push
 * notifications (kind `message_posted`) in that transaction: a new thread to the project's
 * people, a reply to the thread's participants (shared/messages/notify.ts).
 */
import { z } from "zod";
import { findProject } from "../../../shared/db/projects.ts";
import { publish } from "../../../shared/events/publish.ts";
import { notifyMessagePosted } from "../../../shared/messages/notify.ts";
import { findMessage, findThread, insertMessage, insertThread, listMessages, listThreads, markRead } from "../../../shared/messages/store.ts";
import { currentUser } from "../../context.ts";
import { paginated, paginatedSchema } from "../../pagination.ts";
import { canViewProject } from "../../policies/project.ts";
import { projectForRead } from "../../policies/projectGuard.ts";
import { linkSigner } from "../../presenters/attachment.ts";
import { messageResource, presentMessage, presentThread, threadResource } from "../../presenters/message.ts";
import { registerChannelAuthorizer } from "../../realtime/channelAuth.ts";
import { defineRoute } from "../route.ts";
import { presentMessages, threadForRead } from "./load.ts";
import { createThreadBody, listThreadsQuery, postMessageBody, threadParams } from "./messages.schema.ts";

const tags = ["Messages"];

/** The channel of a thread. */
export const threadChannel = (threadId: number) => `private-message-thread.${threadId}`;

const list = defineRoute({
  method: "get",
  path: "/messages/threads",
  summary: "The caller's threads, newest activity first",
  description: "Threads of the projects the caller owns or shares through a team, with `messages_count`, `latest_message_at` and `unread_count` (messages of others after the caller's last read).",
  tags,
  auth: "bearer",
  query: listThreadsQuery,
  responses: { 200: { description: "A page of threads", schema: paginatedSchema(threadResource) } },
  handler: async (ctx, { query }) => {
    const user = currentUser(ctx);
    const { rows, total } = await listThreads(ctx.deps.pool, user.id, query.per_page, (query.page - 1) * query.per_page);
    ctx.body = paginated(rows.map(presentThread), total, query, new URL(ctx.href));
  },
});

const threadWithMessages = threadResource.extend({ messages: z.array(messageResource) });

const create = defineRoute({
  method: "post",
  path: "/messages/threads",
  summary: "Start a thread in a project with its first message",
  description: "The project's owner and team members with a push subscription are notified (kind `message_posted`, as their settings allow).",
  tags,
  auth: "bearer",
  body: createThreadBody,
  responses: {
    201: { description: "Created", schema: z.object({ message: z.string(), thread: threadWithMessages }) },
    404: { description: "No such project (or one the caller does not see)" },
  },
  handler: async (ctx, { body }) => {
    const user = currentUser(ctx);
    const { pool, config } = ctx.deps;
    const { threadId } = await pool.transaction(async (tx) => {
      const project = await projectForRead(tx, body.project_id, user);
      const created = await insertThread(tx, project.id, user.id, body.subject, body.body);
      await notifyMessagePosted(tx, { threadId: created.threadId, subject: body.subject, authorId: user.id, authorName: user.name, body: body.body }, "project");
      return created;
    });
    const thread = (await findThread(pool, threadId, user.id))!;
    ctx.status = 201;
    ctx.body = { message: "Thread created.", thread: { ...presentThread(thread), messages: await presentMessages(pool, await listMessages(pool, threadId), linkSigner(config)) } };
  },
});

const show = defineRoute({
  method: "get",
  path: "/messages/threads/{threadId}",
  summary: "A thread with its messages, oldest first (marks it read for the caller)",
  tags,
  auth: "bearer",
  params: threadParams,
  responses: { 200: { description: "The thread", schema: threadWithMessages } },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    const { pool, config } = ctx.deps;
    const { thread } = await threadForRead(pool, params.threadId, user);
    const messages = await listMessages(pool, thread.id);
    const last = messages.at(-1);
    if (last) await markRead(pool, thread.id, user.id, last.id);
    ctx.body = { ...presentThread({ ...thread, unread_count: 0 }), messages: await presentMessages(pool, messages, linkSigner(config)) };
  },
});

const post = defineRoute({
  method: "post",
  path: "/messages/threads/{threadId}",
  summary: "Post a message in a thread",
  description:
    "Publishes `MessagePosted` (`{thread_id, message}`) on `private-message-thread.{threadId}` and notifies the thread's other participants (who started it, wrote in it or opened it) by push (kind `message_posted`, as their settings allow).",
  tags,
  auth: "bearer",
  params: threadParams,
  body: postMessageBody,
  responses: { 201: { description: "Posted", schema: z.object({ message: z.string(), message_data: messageResource }) } },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const { pool, config } = ctx.deps;
    const sign = linkSigner(config);
    const data = await pool.transaction(async (tx) => {
      const { thread } = await threadForRead(tx, params.threadId, user);
      const id = await insertMessage(tx, thread.id, user.id, body.body);
      const data = presentMessage((await findMessage(tx, id))!, [], sign);
      // Subscribers get the message without its links' signatures mattering: it has no attachments yet.
      await publish(tx, { channel: threadChannel(thread.id), event: "MessagePosted", data: { thread_id: thread.id, message: data } });
      await notifyMessagePosted(tx, { threadId: thread.id, subject: thread.subject, authorId: user.id, authorName: user.name, body: body.body }, "participants");
      return data;
    });
    ctx.status = 201;
    ctx.body = { message: "Message posted.", message_data: data };
  },
});

// Thread events go to whoever may read the thread.
registerChannelAuthorizer("private-message-thread.", async (deps, user, id) => {
  if (!/^[1-9][0-9]{0,15}$/.test(id)) return false;
  const thread = await findThread(deps.pool, Number(id), user.id);
  if (!thread) return false;
  const project = await findProject(deps.pool, thread.project_id, user.id);
  return project !== null && canViewProject(user, project);
});

export const threadRoutes = [list, create, show, post];
