/**
 * One message (DESIGN §11): its author edits it; its author or whoever manages the project
 * deletes it (with its attachments); its author attaches files (`POST
 * /messages/{messageId}/attachments`, multipart `file`), which go through storage with a
 * sanitised name and the type read from their bytes, and are downloaded by signed link.
 */
import { z } from "zod";
import { insertAttachment } from "../../../shared/attachments/store.ts";
import { discardStored, isUploadedFile, storeUploads } from "../../../shared/attachments/upload.ts";
import { forbidden, invalid } from "../../../shared/errors.ts";
import { countMessageAttachments, deleteMessage, findMessage, lockMessage, updateMessage } from "../../../shared/messages/store.ts";
import { currentUser } from "../../context.ts";
import { canManageProject } from "../../policies/project.ts";
import { attachmentResource, linkSigner, presentAttachment } from "../../presenters/attachment.ts";
import { messageResource } from "../../presenters/message.ts";
import { messageResponse } from "../auth/auth.schema.ts";
import { idParams } from "../jobs/jobs.schema.ts";
import { defineRoute } from "../route.ts";
import { messageForRead, presentMessages } from "./load.ts";
import { attachmentForm, messageParams, postMessageBody } from "./messages.schema.ts";

const tags = ["Messages"];
/** Files one message may carry. */
export const MAX_MESSAGE_ATTACHMENTS = 10;

const update = defineRoute({
  method: "put",
  path: "/messages/{id}",
  summary: "Edit one's own message",
  tags,
  auth: "bearer",
  params: idParams,
  body: postMessageBody,
  responses: { 200: { description: "Updated", schema: z.object({ message: z.string(), message_data: messageResource }) } },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const { pool, config } = ctx.deps;
    await pool.transaction(async (tx) => {
      const { message } = await messageForRead(tx, params.id, user);
      if (message.user_id !== user.id) throw forbidden("Only its author may edit a message.");
      await updateMessage(tx, message.id, body.body);
    });
    const [data] = await presentMessages(pool, [(await findMessage(pool, params.id))!], linkSigner(config));
    ctx.body = { message: "Message updated.", message_data: data };
  },
});

const remove = defineRoute({
  method: "delete",
  path: "/messages/{id}",
  summary: "Delete a message with its attachments (its author, or whoever manages the project)",
  tags,
  auth: "bearer",
  params: idParams,
  responses: { 200: { description: "Deleted", schema: messageResponse } },
  handler: async (ctx, { params }) => {
    const user = currentUser(ctx);
    await ctx.deps.pool.transaction(async (tx) => {
      const { message, project } = await messageForRead(tx, params.id, user);
      if (message.user_id !== user.id && !canManageProject(user, project)) throw forbidden("Only its author or a manager of the project may delete a message.");
      await deleteMessage(tx, message.id, message.thread_id);
    });
    ctx.body = { message: "Message deleted." };
  },
});

const attach = defineRoute({
  method: "post",
  path: "/messages/{messageId}/attachments",
  summary: "Attach a file to one's own message (multipart `file`)",
  description: `At most UPLOAD_LIMIT_BYTES; at most ${MAX_MESSAGE_ATTACHMENTS} files a message. The name is kept without path parts or control characters; the type is read from the bytes.`,
  tags,
  auth: "bearer",
  params: messageParams,
  body: attachmentForm,
  bodyKind: "multipart",
  responses: { 201: { description: "Stored", schema: z.object({ message: z.string(), attachment: attachmentResource }) } },
  handler: async (ctx, { params, body }) => {
    const user = currentUser(ctx);
    const { pool, storage, config } = ctx.deps;
    const check = async (conn: typeof pool | Parameters<Parameters<typeof pool.transaction>[0]>[0], lock = false) => {
      // Uploads to one message are counted one at a time, or two at once could both pass the
      // limit; read under the lock, a message deleted meanwhile is 404.
      if (lock) await lockMessage(conn, params.messageId);
      const { message } = await messageForRead(conn, params.messageId, user);
      if (message.user_id !== user.id) throw forbidden("Only its author may attach files to a message.");
      if ((await countMessageAttachments(conn, message.id)) >= MAX_MESSAGE_ATTACHMENTS) throw invalid({ file: [`A message carries at most ${MAX_MESSAGE_ATTACHMENTS} files.`] });
      return message;
    };
    await check(pool);
    if (Array.isArray(body.file) || !isUploadedFile(body.file)) throw invalid({ file: ["Send one file in the file field."] });
    const stored = await storeUploads(storage, "messages", [body.file]);
    try {
      const row = await pool.transaction(async (tx) => {
        const message = await check(tx, true);
        return insertAttachment(tx, { owner: { messageId: message.id }, userId: user.id, ...stored[0]! });
      });
      ctx.status = 201;
      ctx.body = { message: "File attached.", attachment: presentAttachment(row, linkSigner(config)) };
    } catch (error) {
      await discardStored(storage, stored);
      throw error;
    }
  },
});

export const messageRoutes = [update, remove, attach];
