/**
 * Signed, expiring download links of attachments: `/api/attachments/{id}/download?expires=
 * <unix seconds>&signature=<hex HMAC-SHA256 under APP_KEY over "id:expires">`. The
 * signature binds the id, so a link never opens another file, and the expiry, so it cannot
 * be extended; a link is valid until its expiry (ATTACHMENT_LINK_TTL_MINUTES, default 15).
 */
import { sign, verifySignature } from "../crypto.ts";

const PURPOSE = "attachment-download";

/** The path (below the app URL) of a download link for attachment `id`, valid for `ttlMs` from `now`. */
export function attachmentLink(appKey: Buffer, id: number, ttlMs: number, now = Date.now()): { path: string; expiresAt: Date } {
  const expires = Math.floor((now + ttlMs) / 1000);
  const signature = sign(appKey, PURPOSE, `${id}:${expires}`);
  return { path: `/api/attachments/${id}/download?expires=${expires}&signature=${signature}`, expiresAt: new Date(expires * 1000) };
}

/** Whether `signature` signs attachment `id` until `expires` (unix seconds) and that moment has not passed. */
export function linkIsValid(appKey: Buffer, id: number, expires: number, signature: string, now = Date.now()): boolean {
  if (!verifySignature(appKey, PURPOSE, `${id}:${expires}`, signature)) return false;
  return expires * 1000 > now;
}
