/**
 * E-mail verification links: `/verify-email/{id}/{hash}?expires=…&signature=…` on the web
 * client, which POSTs id and hash (path) and expires and signature (query) to
 * /api/auth/email/verify/{id}/{hash}. `hash` is the SHA-1 of the address, so a link stops
 * working when the address changes; the signature (HMAC under APP_KEY) covers id, hash and
 * expiry, so neither can be altered. Links are valid for 24 hours and work once: a used
 * link's signature is recorded (`claimLink`) until it would have expired.
 *
 * The same link confirms a pending e-mail change (shared/auth/emailChanges.ts): its hash is
 * then that of the new address.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { sha256, sign, verifySignature } from "../crypto.ts";
import { sql, type CommonQueryMethods } from "../db/pool.ts";

export const VERIFICATION_TTL_S = 24 * 3600;

export const emailHash = (email: string) => createHash("sha1").update(email.trim().toLowerCase()).digest("hex");

const payload = (id: number, hash: string, expires: number) => `${id}|${hash}|${expires}`;

/** Builds the link e-mailed to the user. */
export function verificationLink(frontendUrl: string, appKey: Buffer, user: { id: number; email: string }, now = Date.now()): string {
  const hash = emailHash(user.email);
  const expires = Math.floor(now / 1000) + VERIFICATION_TTL_S;
  const signature = sign(appKey, "verify-email", payload(user.id, hash, expires));
  return `${frontendUrl}/verify-email/${user.id}/${hash}?expires=${expires}&signature=${signature}`;
}

export type VerificationCheck = "valid" | "expired" | "invalid";

/** Checks the parts of a verification link against `user.email` (the current address, or the one a change would set). */
export function checkVerification(appKey: Buffer, user: { id: number; email: string }, hash: string, expires: number, signature: string): VerificationCheck {
  if (hash !== emailHash(user.email)) return "invalid";
  if (!verifySignature(appKey, "verify-email", payload(user.id, hash, expires), signature)) return "invalid";
  return expires * 1000 < Date.now() ? "expired" : "valid";
}

/** Marks a verification link used; resolves to false when it had been used before. */
export async function claimLink(conn: CommonQueryMethods, userId: number, signature: string, expires: number): Promise<boolean> {
  const row = await conn.maybeOne(sql.type(z.object({ user_id: z.number() }))`
    insert into used_email_links (link_hash, user_id, expires_at)
    values (${sql.binary(sha256(signature))}, ${userId}, to_timestamp(${expires}))
    on conflict (link_hash) do nothing
    returning user_id`);
  return row !== null;
}
