/**
 * Purging identity rows nobody can use any more, run by maintenance__cleanup. Each rule
 * keeps a row as long as some check may still read it:
 * - rate-limit counters until their window has ended (the longest window any counter uses);
 * - revoked access tokens until the token would have expired anyway (plus the verifier's
 *   clock tolerance), since only then does the signature check alone refuse it;
 * - oidc-provider models until they expire, or once their grant is gone (refresh tokens of
 *   an ended grant are refused anyway). A consumed refresh token is kept until it expires:
 *   presenting it again is how reuse is detected and its family revoked;
 * - two-factor challenges once used or expired;
 * - trusted devices 90 days after they expired, so a login from a device whose trust has
 *   lapsed still answers `needs_reverification` for a while;
 * - password reset tokens once expired;
 * - used e-mail links once the link would have expired anyway (its signature refuses it then);
 * - e-mail changes once they can no longer be cancelled;
 * - sign-in sources once they are no longer known (KNOWN_SOURCE_DAYS);
 * - personal API tokens 30 days after they expired: they stopped authenticating at their
 *   expiry, and GET /api-tokens shows them as expired meanwhile, so a script that starts
 *   failing can be traced to its token.
 */
import { z } from "zod";
import { sql, type DatabasePool } from "../db/pool.ts";
import { KNOWN_SOURCE_DAYS } from "./loginSources.ts";

/** How long after its expiry a trusted device is remembered (for `needs_reverification`). */
export const EXPIRED_DEVICE_MEMORY_DAYS = 90;

/** How long after its expiry a personal API token stays listed (as expired) before it is deleted. */
export const EXPIRED_TOKEN_MEMORY_DAYS = 30;

/** Seconds a revoked token is kept past its expiry: the verifier's clock tolerance, with room. */
const REVOCATION_MARGIN_S = 60;

const count = z.object({ count: z.number() });

/** Rows removed per table. */
export interface IdentityPurge {
  rate_limit_counters: number;
  revoked_access_tokens: number;
  oauth_models: number;
  two_factor_challenges: number;
  trusted_devices: number;
  password_resets: number;
  personal_access_tokens: number;
  used_email_links: number;
  email_changes: number;
  two_factor_restores: number;
  login_sources: number;
}

/** Deletes expired identity rows; `longestWindowS` is the longest rate-limit or login window in use. */
export async function purgeIdentityRows(pool: DatabasePool, longestWindowS: number): Promise<IdentityPurge> {
  const purge = (query: ReturnType<typeof sql.fragment>) => pool.oneFirst(sql.type(count)`
    with gone as (${query} returning 1) select count(*)::int as count from gone`);
  return {
    rate_limit_counters: await purge(sql.fragment`
      delete from rate_limit_counters where window_start < now() - make_interval(secs => ${longestWindowS})`),
    revoked_access_tokens: await purge(sql.fragment`
      delete from revoked_access_tokens where expires_at < now() - make_interval(secs => ${REVOCATION_MARGIN_S})`),
    // Expired models first, so tokens of a grant that just expired go in the second statement.
    oauth_models:
      (await purge(sql.fragment`delete from oauth_models where expires_at < now()`)) +
      (await purge(sql.fragment`
        delete from oauth_models m
        where m.model <> 'Grant' and m.grant_id is not null
          and not exists (select 1 from oauth_models g where g.model = 'Grant' and g.id = m.grant_id)`)),
    two_factor_challenges: await purge(sql.fragment`
      delete from two_factor_challenges where expires_at < now() or used_at is not null`),
    trusted_devices: await purge(sql.fragment`
      delete from trusted_devices where expires_at < now() - make_interval(days => ${EXPIRED_DEVICE_MEMORY_DAYS})`),
    password_resets: await purge(sql.fragment`delete from password_resets where expires_at < now()`),
    personal_access_tokens: await purge(sql.fragment`
      delete from personal_access_tokens where expires_at < now() - make_interval(days => ${EXPIRED_TOKEN_MEMORY_DAYS})`),
    used_email_links: await purge(sql.fragment`delete from used_email_links where expires_at < now()`),
    email_changes: await purge(sql.fragment`delete from email_changes where cancel_expires_at < now()`),
    two_factor_restores: await purge(sql.fragment`delete from two_factor_restores where expires_at < now() or used_at is not null`),
    login_sources: await purge(sql.fragment`delete from login_sources where last_success_at < now() - make_interval(days => ${KNOWN_SOURCE_DAYS})`),
  };
}
