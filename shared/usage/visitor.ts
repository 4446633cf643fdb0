/**
 * Counting a page view without identifying its visitor: whether the request may be counted
 * at all (Do Not Track, Global Privacy Control, crawlers), the visitor's daily hash, and the
 * parts of path and referrer that are kept.
 */
import { createHmac } from "node:crypto";

/** Whether the request asks not to be tracked (`DNT: 1`, `Sec-GPC: 1`) or comes from a crawler. */
export function mayCount(headers: { dnt?: string | undefined; gpc?: string | undefined; userAgent?: string | undefined }): boolean {
  if (headers.dnt?.trim() === "1" || headers.gpc?.trim() === "1") return false;
  return !/bot|crawl|spider|slurp|headless/i.test(headers.userAgent ?? "");
}

/** The visitor of a day: HMAC-SHA-256 of address and user agent under the day's salt, 16 bytes. */
export const visitorHash = (salt: Buffer, ip: string, userAgent: string) => createHmac("sha256", salt).update(`${ip}\n${userAgent}`).digest().subarray(0, 16);

/** The path without query or fragment (they may carry identifiers). */
export const keptPath = (path: string) => path.split(/[?#]/, 1)[0]!.slice(0, 500) || "/";

/** The referrer's host, or null for none, an unparsable one, or one of `ownHosts`. */
export function referrerHost(referrer: string | null | undefined, ownHosts: readonly string[]): string | null {
  if (!referrer || !URL.canParse(referrer)) return null;
  const url = new URL(referrer);
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  const host = url.hostname.toLowerCase();
  return ownHosts.includes(host) ? null : host.slice(0, 255);
}

/** Today's UTC day as YYYY-MM-DD. */
export const utcDay = (at = new Date()) => at.toISOString().slice(0, 10);
