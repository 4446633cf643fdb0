import { z } from "zod";

const base64url = (bytes: number, what: string) =>
  z
    .string()
    .max(200)
    .refine((v) => /^[A-Za-z0-9_-]+={0,2}$/.test(v) && Buffer.from(v, "base64url").length === bytes, { error: `The ${what} key must be ${bytes} bytes, base64url-encoded.` });

/**
 * The last instant with a four-digit year (ms since the epoch): a later Date is written
 * "+185590-…" by toISOString, which PostgreSQL's timestamptz does not read.
 */
const LAST_ISO_INSTANT = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** A browser's PushSubscription as `JSON.stringify(subscription)` gives it (DESIGN §14). */
export const subscribeBody = z.object({
  endpoint: z.url({ protocol: /^https?$/, error: "The endpoint must be the push service's http(s) URL." }).max(2048),
  expirationTime: z.number().int().min(0).max(LAST_ISO_INSTANT, { error: "The expiration time must lie before the year 10000." }).nullable().optional(),
  keys: z.object({
    p256dh: base64url(65, "p256dh").refine((v) => Buffer.from(v, "base64url")[0] === 4, { error: "The p256dh key must be an uncompressed P-256 point." }),
    auth: base64url(16, "auth"),
  }),
});

export const unsubscribeBody = z.object({ endpoint: z.string().min(1).max(2048) });

export const subscriptionResource = z.object({ id: z.number(), endpoint: z.string(), expires_at: z.string().nullable() });
