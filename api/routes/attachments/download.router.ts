/**
 * `GET /attachments/{id}/download?expires=&signature=` (DESIGN §11): the signed, expiring
 * link is the credential (no token, so a browser can follow it); a tampered, foreign or
 * expired link is 403. The file is always a download: `Content-Disposition: attachment`,
 * `X-Content-Type-Options: nosniff` and a CSP that forbids everything, with the type read
 * from its bytes at upload (never HTML).
 */
import { linkIsValid } from "../../../shared/attachments/links.ts";
import { findDownloadable } from "../../../shared/attachments/store.ts";
import { AppError, notFound } from "../../../shared/errors.ts";
import { readForRequest, sendStoredFile } from "../../byteRanges.ts";
import { idParams } from "../jobs/jobs.schema.ts";
import { downloadQuery } from "../messages/messages.schema.ts";
import { defineRoute } from "../route.ts";

/**
 * `filename*` per RFC 6266/8187 with an ASCII fallback. encodeURIComponent leaves `'`, `(`,
 * `)` and `*` as they are, which RFC 8187's attr-char does not allow (a strict parser drops
 * the whole parameter, or reads the `'` as its own delimiter), so those are escaped too.
 */
function disposition(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]/g, "_").replace(/["\\%]/g, "_");
  const encoded = encodeURIComponent(fileName).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

const download = defineRoute({
  method: "get",
  path: "/attachments/{id}/download",
  summary: "Download an attachment by its signed link",
  description: "Public: the link (`download_url` of an attachment, valid ATTACHMENT_LINK_TTL_MINUTES, default 15) carries `expires` and an HMAC `signature` under APP_KEY over the id and expiry. 403 `invalid_signature` for a tampered, foreign or expired link.",
  tags: ["Messages"],
  auth: "public",
  params: idParams,
  query: downloadQuery,
  responses: {
    200: { description: "The file; `Range` and `If-Range` resume a cut-off download", contentType: "application/octet-stream" },
    206: { description: "The byte range asked for (`Content-Range`)", contentType: "application/octet-stream" },
    403: { description: "Tampered or expired link" },
    416: { description: "The range is not within the file (`Content-Range: bytes */<size>`)" },
  },
  handler: async (ctx, { params, query }) => {
    const { pool, storage, config } = ctx.deps;
    if (!linkIsValid(config.appKey, params.id, query.expires, query.signature)) {
      throw new AppError(403, "invalid_signature", "This download link is invalid or has expired.");
    }
    const row = await findDownloadable(pool, params.id);
    const file = row ? await readForRequest(ctx, storage, row.storage_key) : null;
    if (!row || !file) throw notFound("Attachment");
    ctx.set("Content-Disposition", disposition(row.file_name));
    ctx.set("X-Content-Type-Options", "nosniff");
    ctx.set("Content-Security-Policy", "default-src 'none'; sandbox");
    ctx.set("Cache-Control", "private, no-store");
    ctx.type = row.content_type.startsWith("text/") ? "text/plain; charset=utf-8" : row.content_type;
    sendStoredFile(ctx, file);
  },
});

export const attachmentRoutes = [download];
