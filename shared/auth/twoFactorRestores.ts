/**
 * Undoing a two-factor change the owner did not make. Turning two-factor off and making new
 * recovery codes take the password only (DESIGN §6 fixes `{password}`), so a stolen session
 * plus a phished password could do either: with 2FA off, or with fresh recovery codes in the
 * thief's hands, the second factor no longer guards the account. Like an e-mail change
 * (shared/auth/emailChanges.ts), each such change mails the account a notice with a link
 * (valid RESTORE_TTL_DAYS, once) that puts back the two-factor state from just before it (the
 * same secret, so the owner's authenticator app works again, and the recovery codes then
 * unused) and ends every session, trusted devices included.
 *
 * Glossary: a *restore* is the kept state plus the hash of its link's token.
 */
import { z } from "zod";
import { randomToken, sha256 } from "../crypto.ts";
import { revokeOAuthGrantsOfAccount } from "../db/oauth.ts";
import { ignoredRow, sql, type CommonQueryMethods } from "../db/pool.ts";
import { revokeAllTokens } from "../db/users.ts";
import { enqueueMail } from "../mail/enqueueMail.ts";

export const RESTORE_TTL_DAYS = 7;

/** What was changed: two-factor turned off, or the recovery codes replaced. */
export type TwoFactorChange = "disabled" | "recovery_codes";

/** The account the notice goes to. */
export interface NoticeRecipient {
  id: number;
  name: string;
  email: string;
  language: string;
}

/**
 * Keeps `user`'s two-factor state as it is now (call in the changing transaction, before the
 * change) and queues the notice with its restore link; resolves to the link's token. Does
 * nothing (null) when two-factor is off.
 */
export async function noticeTwoFactorChange(tx: CommonQueryMethods, user: NoticeRecipient, change: TwoFactorChange, frontendUrl: string): Promise<string | null> {
  await tx.query(sql.type(ignoredRow)`select 1 from users where id = ${user.id} for update`);
  const token = randomToken(32);
  const kept = await tx.maybeOne(sql.type(z.object({ id: z.number() }))`
    insert into two_factor_restores (user_id, reason, secret, confirmed_at, recovery_code_hashes, token_hash, expires_at)
    select u.id, ${change}, u.two_factor_secret, u.two_factor_confirmed_at,
      array(select c.code_hash from two_factor_recovery_codes c where c.user_id = u.id and c.used_at is null order by c.id),
      ${sql.binary(sha256(token))}, now() + make_interval(days => ${RESTORE_TTL_DAYS})
    from users u where u.id = ${user.id} and u.two_factor_secret is not null and u.two_factor_confirmed_at is not null
    returning id`);
  if (!kept) return null;
  await enqueueMail(tx, {
    to: user.email,
    kind: change === "disabled" ? "two_factor_disabled" : "two_factor_recovery_codes",
    locale: user.language,
    params: { name: user.name },
    link: `${frontendUrl}/restore-two-factor?token=${encodeURIComponent(token)}`,
    userId: user.id,
  });
  return token;
}

/**
 * Restores the two-factor state kept for `token`, and ends every session and trusted device
 * of the account; the links of later changes stop working. Resolves to the user id, or null
 * when the token is unknown, used or expired.
 */
export async function restoreTwoFactor(tx: CommonQueryMethods, token: string): Promise<number | null> {
  const restore = await tx.maybeOne(sql.type(z.object({ id: z.number(), user_id: z.number() }))`
    select id, user_id from two_factor_restores
    where token_hash = ${sql.binary(sha256(token))} and used_at is null and expires_at > now()
    for update`);
  if (!restore) return null;
  // The state it restores came before every later change, so their links have nothing left to undo
  // (using them would bring back what this one undid, a thief's recovery codes say).
  await tx.query(sql.type(ignoredRow)`
    update two_factor_restores set used_at = now() where user_id = ${restore.user_id} and id >= ${restore.id} and used_at is null`);
  await tx.query(sql.type(ignoredRow)`
    update users u set two_factor_secret = r.secret, two_factor_pending_secret = null, two_factor_confirmed_at = r.confirmed_at, updated_at = now()
    from two_factor_restores r where r.id = ${restore.id} and u.id = r.user_id`);
  await tx.query(sql.type(ignoredRow)`delete from two_factor_recovery_codes where user_id = ${restore.user_id}`);
  await tx.query(sql.type(ignoredRow)`
    insert into two_factor_recovery_codes (user_id, code_hash)
    select user_id, unnest(recovery_code_hashes) from two_factor_restores where id = ${restore.id}`);
  await tx.query(sql.type(ignoredRow)`delete from trusted_devices where user_id = ${restore.user_id}`);
  await revokeAllTokens(tx, restore.user_id);
  await revokeOAuthGrantsOfAccount(tx, restore.user_id);
  return restore.user_id;
}
