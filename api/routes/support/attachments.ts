/**
 * Files on support-ticket messages: sent as multipart (`attachments` or `attachments[i]`,
 * at most MAX_TICKET_ATTACHMENTS per message, sizes bounded by the upload limits), stored
 * before the transaction and removed again when it fails, presented with signed download
 * links only beside messages the reader may see (so an internal note's files stay with the
 * administrators).
 */
import { insertAttachment, listSupportMessageAttachments } from "../../../shared/attachments/store.ts";
import { discardStored, isUploadedFile, storeUploads, type UploadedFile } from "../../../shared/attachments/upload.ts";
import type { Config } from "../../../shared/config.ts";
import type { CommonQueryMethods, DatabaseTransactionConnection } from "../../../shared/db/pool.ts";
import type { AppContext } from "../../context.ts";
import { invalid } from "../../../shared/errors.ts";
import type { MessageRow } from "../../../shared/support/store.ts";
import { linkSigner, presentAttachment } from "../../presenters/attachment.ts";
import { presentTicketMessage } from "../../presenters/supportTicket.ts";

export const MAX_TICKET_ATTACHMENTS = 5;
const FIELD = /^attachments(\[\d{0,3}\])?$/;
const indexOf = (key: string) => Number(/\[(\d+)\]$/.exec(key)?.[1] ?? -1);

/** The files of a ticket form in field order; 422 for a non-file in an attachments field or too many. */
export function ticketFilesOf(body: Record<string, unknown>): UploadedFile[] {
  const files: UploadedFile[] = [];
  for (const [key, value] of Object.entries(body).sort(([a], [b]) => indexOf(a) - indexOf(b))) {
    if (!FIELD.test(key)) continue;
    for (const item of Array.isArray(value) ? value : [value]) {
      if (!isUploadedFile(item)) throw invalid({ [key]: ["Each attachment must be a file (send the message as multipart/form-data)."] });
      files.push(item);
    }
  }
  if (files.length > MAX_TICKET_ATTACHMENTS) throw invalid({ attachments: [`A message carries at most ${MAX_TICKET_ATTACHMENTS} attachments.`] });
  return files;
}

/** Presents `messages` (already filtered to what the reader may see) with their attachments. */
export async function presentConversation(conn: CommonQueryMethods, config: Config, messages: readonly MessageRow[]) {
  const rows = await listSupportMessageAttachments(conn, messages.map((m) => m.id));
  const sign = linkSigner(config);
  return messages.map((m) => ({
    ...presentTicketMessage(m),
    attachments: rows.filter((a) => a.support_message_id === m.id).map((a) => presentAttachment(a, sign)),
  }));
}

/**
 * Runs `write` in a transaction after storing `files`; `write` calls `attach(messageId)` to
 * record them on the message it wrote. Stored files are removed again if anything fails.
 */
export async function writeWithFiles<R>(
  ctx: AppContext,
  userId: number,
  files: UploadedFile[],
  write: (tx: DatabaseTransactionConnection, attach: (supportMessageId: number) => Promise<void>) => Promise<R>,
): Promise<R> {
  const { pool, storage } = ctx.deps;
  const stored = files.length ? await storeUploads(storage, "support", files) : [];
  try {
    return await pool.transaction((tx) =>
      write(tx, async (supportMessageId) => {
        for (const file of stored) await insertAttachment(tx, { owner: { supportMessageId }, userId, ...file });
      }),
    );
  } catch (error) {
    await discardStored(storage, stored);
    throw error;
  }
}
