/**
 * An attachment of a kanban comment or a message: its sanitised name, the type read from
 * its bytes, its size and a signed download link that expires (shared/attachments/links.ts).
 */
import { z } from "zod";
import type { AttachmentRow } from "../../shared/attachments/store.ts";
import { attachmentLink } from "../../shared/attachments/links.ts";
import type { Config } from "../../shared/config.ts";

/** Makes the signed link of an attachment id. */
export type LinkSigner = (id: number) => { url: string; expires_at: string };

/** The signer for this service's key, app URL and link lifetime. */
export function linkSigner(config: Pick<Config, "appKey" | "appUrl" | "attachments">): LinkSigner {
  const now = Date.now();
  return (id) => {
    const link = attachmentLink(config.appKey, id, config.attachments.linkTtlMs, now);
    return { url: `${config.appUrl}${link.path}`, expires_at: link.expiresAt.toISOString() };
  };
}

export const attachmentResource = z.object({
  id: z.number(),
  file_name: z.string(),
  content_type: z.string(),
  byte_size: z.number(),
  download_url: z.string(),
  download_expires_at: z.string(),
  created_at: z.string(),
});

export function presentAttachment(row: AttachmentRow, sign: LinkSigner) {
  const link = sign(row.id);
  return {
    id: row.id,
    file_name: row.file_name,
    content_type: row.content_type,
    byte_size: row.byte_size,
    download_url: link.url,
    download_expires_at: link.expires_at,
    created_at: row.created_at.toISOString(),
  };
}
