/**
 * Attachments of kanban comments, messages and support-ticket messages in the database; their bytes live in
 * shared/storage under `storage_key`. A deleted row leaves its key for the media sweep
 * (trigger in migration 0030), so a card or thread deletion removes the files too.
 */
import { z } from "zod";
import { sql, type CommonQueryMethods } from "../db/pool.ts";

export const attachmentRow = z.object({
  id: z.number(),
  comment_id: z.number().nullable(),
  message_id: z.number().nullable(),
  support_message_id: z.number().nullable(),
  user_id: z.number().nullable(),
  file_name: z.string(),
  content_type: z.string(),
  byte_size: z.number(),
  storage_key: z.string(),
  created_at: z.date(),
});
export type AttachmentRow = z.infer<typeof attachmentRow>;

const columns = sql.fragment`a.id, a.comment_id, a.message_id, a.support_message_id, a.user_id, a.file_name, a.content_type, a.byte_size, a.storage_key, a.created_at`;

/** What a stored upload is recorded with. */
export interface NewAttachment {
  /** Exactly one owner: a kanban comment, a message or a support-ticket message. */
  owner: { commentId: number } | { messageId: number } | { supportMessageId: number };
  userId: number;
  fileName: string;
  contentType: string;
  byteSize: number;
  storageKey: string;
}

/** Records an uploaded file. */
export async function insertAttachment(conn: CommonQueryMethods, input: NewAttachment): Promise<AttachmentRow> {
  const commentId = "commentId" in input.owner ? input.owner.commentId : null;
  const messageId = "messageId" in input.owner ? input.owner.messageId : null;
  const supportMessageId = "supportMessageId" in input.owner ? input.owner.supportMessageId : null;
  return conn.one(sql.type(attachmentRow)`
    insert into attachments as a (comment_id, message_id, support_message_id, user_id, file_name, content_type, byte_size, storage_key)
    values (${commentId}, ${messageId}, ${supportMessageId}, ${input.userId}, ${input.fileName}, ${input.contentType}, ${input.byteSize}, ${input.storageKey})
    returning ${columns}`);
}

/** The attachments of some comments, oldest first. */
export async function listCommentAttachments(conn: CommonQueryMethods, commentIds: readonly number[]): Promise<readonly AttachmentRow[]> {
  if (commentIds.length === 0) return [];
  return conn.any(sql.type(attachmentRow)`
    select ${columns} from attachments a where a.comment_id = any(${sql.array([...commentIds], "int8")}) order by a.id`);
}

/** The attachments of some messages, oldest first. */
export async function listMessageAttachments(conn: CommonQueryMethods, messageIds: readonly number[]): Promise<readonly AttachmentRow[]> {
  if (messageIds.length === 0) return [];
  return conn.any(sql.type(attachmentRow)`
    select ${columns} from attachments a where a.message_id = any(${sql.array([...messageIds], "int8")}) order by a.id`);
}

/** The attachments of some support-ticket messages, oldest first. */
export async function listSupportMessageAttachments(conn: CommonQueryMethods, supportMessageIds: readonly number[]): Promise<readonly AttachmentRow[]> {
  if (supportMessageIds.length === 0) return [];
  return conn.any(sql.type(attachmentRow)`
    select ${columns} from attachments a where a.support_message_id = any(${sql.array([...supportMessageIds], "int8")}) order by a.id`);
}

/**
 * An attachment that may still be downloaded (its project is not deleted; a support
 * ticket's while the ticket exists), with that project's id (null for a ticket's); null
 * otherwise.
 */
export async function findDownloadable(conn: CommonQueryMethods, id: number): Promise<(AttachmentRow & { project_id: number | null }) | null> {
  return conn.maybeOne(sql.type(attachmentRow.extend({ project_id: z.number().nullable() }))`
    select ${columns}, p.id as project_id from attachments a
    left join kanban_comments c on c.id = a.comment_id
    left join kanban_cards k on k.id = c.card_id
    left join kanban_boards b on b.id = k.board_id
    left join messages m on m.id = a.message_id
    left join message_threads t on t.id = m.thread_id
    left join projects p on p.id = coalesce(b.project_id, t.project_id) and p.deleted_at is null
    where a.id = ${id} and (p.id is not null or a.support_message_id is not null)`);
}
