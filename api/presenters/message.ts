/**
 * Message resources (spec "Messages"): a thread with its counts and the caller's unread
 * count, and a message with its author and attachments (each with a signed download link).
 */
import { z } from "zod";
import type { AttachmentRow } from "../../shared/attachments/store.ts";
import type { MessageRow, ThreadRow } from "../../shared/messages/store.ts";
import { attachmentResource, presentAttachment, type LinkSigner } from "./attachment.ts";

export const threadResource = z.object({
  id: z.number(),
  subject: z.string(),
  project_id: z.number(),
  created_by: z.number().nullable(),
  messages_count: z.number(),
  latest_message_at: z.string(),
  unread_count: z.number(),
  created_at: z.string(),
});

export const presentThread = (row: ThreadRow) => ({
  id: row.id,
  subject: row.subject,
  project_id: row.project_id,
  created_by: row.created_by,
  messages_count: row.messages_count,
  latest_message_at: row.latest_message_at.toISOString(),
  unread_count: row.unread_count,
  created_at: row.created_at.toISOString(),
});

export const messageResource = z.object({
  id: z.number(),
  thread_id: z.number(),
  user_id: z.number().nullable(),
  user: z.object({ id: z.number(), name: z.string() }).nullable(),
  body: z.string(),
  attachments: z.array(attachmentResource),
  created_at: z.string(),
  updated_at: z.string(),
});

export const presentMessage = (row: MessageRow, attachments: readonly AttachmentRow[], sign: LinkSigner) => ({
  id: row.id,
  thread_id: row.thread_id,
  user_id: row.user_id,
  user: row.user_id === null ? null : { id: row.user_id, name: row.user_name ?? "" },
  body: row.body,
  attachments: attachments.map((a) => presentAttachment(a, sign)),
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
});
