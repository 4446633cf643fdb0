/**
 * Changing the e-mail address of an account. The new address is *pending* until the
 * verification link mailed to it is used; until then the old address stays the sign-in and
 * password-reset address. The old address gets a notice with a cancel link (valid
 * CANCEL_TTL_DAYS, also after the change was confirmed): cancelling restores the old
 * address and ends every session, so a change made with a stolen session is undone by the
 * owner with one click.
 */
import { z } from "zod";
import { randomToken, sha256 } from "../crypto.ts";
import { revokeOAuthGrantsOfAccount } from "../db/oauth.ts";
import { ignoredRow, sql, type CommonQueryMethods } from "../db/pool.ts";
import { emailTaken, revokeAllTokens } from "../db/users.ts";
import { emailHash } from "./emailVerification.ts";

export const CANCEL_TTL_DAYS = 7;

const changeRow = z.object({
  id: z.number(),
  user_id: z.number(),
  old_email: z.string(),
  new_email: z.string(),
  confirmed_at: z.date().nullable(),
});
export type EmailChange = z.infer<typeof changeRow>;

/** Records a change of `user`'s address to `newEmail` (replacing one still pending); resolves to the cancel token for the old address. */
export async function requestEmailChange(tx: CommonQueryMethods, user: { id: number; email: string }, newEmail: string): Promise<string> {
  await tx.query(sql.type(ignoredRow)`
    update email_changes set cancelled_at = now() where user_id = ${user.id} and confirmed_at is null and cancelled_at is null`);
  const token = randomToken(32);
  await tx.query(sql.type(ignoredRow)`
    insert into email_changes (user_id, old_email, new_email, cancel_token_hash, cancel_expires_at)
    values (${user.id}, ${user.email}, ${newEmail}, ${sql.binary(sha256(token))}, now() + make_interval(days => ${CANCEL_TTL_DAYS}))`);
  return token;
}

/** The pending change of `userId` whose new address has the link hash `hash`, if any. */
export async function findPendingChange(conn: CommonQueryMethods, userId: number, hash: string): Promise<EmailChange | null> {
  const rows = await conn.any(sql.type(changeRow)`
    select id, user_id, old_email, new_email, confirmed_at from email_changes
    where user_id = ${userId} and confirmed_at is null and cancelled_at is null and cancel_expires_at > now()
    order by id desc`);
  return rows.find((row) => emailHash(row.new_email) === hash) ?? null;
}

/** The address a user is changing to, while a change is pending. */
export async function pendingEmailOf(conn: CommonQueryMethods, userId: number): Promise<string | null> {
  return conn.maybeOneFirst(sql.type(z.object({ new_email: z.string() }))`
    select new_email from email_changes
    where user_id = ${userId} and confirmed_at is null and cancelled_at is null and cancel_expires_at > now()
    order by id desc limit 1`);
}

/**
 * Makes a pending change the account's address (verified: the link proved it). Resolves to
 * false when the address was taken by another account meanwhile.
 */
export async function confirmEmailChange(tx: CommonQueryMethods, change: EmailChange): Promise<boolean> {
  if (await emailTaken(tx, change.new_email, change.user_id)) return false;
  await tx.query(sql.type(ignoredRow)`
    update users set email = ${change.new_email}, email_verified_at = now(), updated_at = now() where id = ${change.user_id}`);
  await tx.query(sql.type(ignoredRow)`update email_changes set confirmed_at = now() where id = ${change.id}`);
  return true;
}

/**
 * Cancels the change of `token` (pending or confirmed): the old address is restored when it
 * is still free, and every token of the account stops working. Resolves to the user id, or
 * null when the token is unknown, used or expired.
 */
export async function cancelEmailChange(tx: CommonQueryMethods, token: string): Promise<number | null> {
  const change = await tx.maybeOne(sql.type(changeRow)`
    select id, user_id, old_email, new_email, confirmed_at from email_changes
    where cancel_token_hash = ${sql.binary(sha256(token))} and cancelled_at is null and cancel_expires_at > now()
    for update`);
  if (!change) return null;
  await tx.query(sql.type(ignoredRow)`update email_changes set cancelled_at = now() where id = ${change.id}`);
  if (change.confirmed_at && !(await emailTaken(tx, change.old_email, change.user_id))) {
    // The old address received the notice, so it is verified as well.
    await tx.query(sql.type(ignoredRow)`
      update users set email = ${change.old_email}, email_verified_at = now(), updated_at = now() where id = ${change.user_id}`);
  }
  await revokeAllTokens(tx, change.user_id);
  await revokeOAuthGrantsOfAccount(tx, change.user_id);
  return change.user_id;
}
