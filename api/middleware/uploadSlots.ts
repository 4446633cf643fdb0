/**
 * Concurrent multipart uploads per account (per client address on a route without one), per
 * web process. Each upload spools its files to the temp folder until its request ends
 * (multipart.ts), so many parallel uploads by one account could fill the disk; past
 * UPLOADS_PER_USER at once the next is refused with 429 `too_many_uploads` before a byte of
 * its body is read. A slot is held from then until the request is over, whichever way it ends
 * (answered, failed, or the connection dropped: formidable fails the parse), since that is
 * when its files are removed.
 */
import { AppError } from "../../shared/errors.ts";
import type { AppContext, AppDeps } from "../context.ts";

/** What a refused upload is told to wait: uploads take seconds, so a few is enough to retry. */
export const UPLOAD_RETRY_AFTER_S = 5;

/** Uploads in progress by holder (`user:<id>` or `ip:<address>`), per app. */
const inProgress = new WeakMap<AppDeps, Map<string, number>>();

const holderOf = (ctx: AppContext) => (ctx.state.user ? `user:${ctx.state.user.id}` : `ip:${ctx.ip}`);

/**
 * Runs `upload` holding one of the caller's upload slots, and frees it when `upload` settles.
 * @throws AppError 429 `too_many_uploads` when the caller already has the most uploads at once.
 */
export async function withUploadSlot<T>(ctx: AppContext, upload: () => Promise<T>): Promise<T> {
  let counts = inProgress.get(ctx.deps);
  if (!counts) inProgress.set(ctx.deps, (counts = new Map()));
  const holder = holderOf(ctx);
  const cap = ctx.deps.config.uploadsPerUser;
  const held = counts.get(holder) ?? 0;
  if (held >= cap) {
    throw new AppError(429, "too_many_uploads", `Too many uploads at once: at most ${cap} may be in progress; wait for one to finish.`, undefined, {
      "Retry-After": String(UPLOAD_RETRY_AFTER_S),
    });
  }
  counts.set(holder, held + 1);
  try {
    return await upload();
  } finally {
    const left = (counts.get(holder) ?? 1) - 1;
    if (left > 0) counts.set(holder, left);
    else counts.delete(holder);
  }
}
