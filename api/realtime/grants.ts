/**
 * Channel grants: who a private subscription was signed for, and with which credential, so
 * an open subscription can be re-authorized when access changes (security review finding 14).
 *
 * POST /broadcasting/auth answers `channel_data` (the grant as JSON) beside `auth`, and signs
 * `socket_id:channel:channel_data` (the scheme Pusher uses for presence channels); pusher-js
 * sends both back in `pusher:subscribe`. The socket server keeps the grant with the
 * subscription and later asks `actingUser` whether its credential still holds: the account
 * exists and is enabled, the token was not revoked (logout, logout-all-devices, a deleted
 * personal token or OAuth grant, a revoked client), and then the channel's own authorizer
 * decides with the user as that token acts.
 *
 * Glossary: a *grant* is the signed record of one channel authorization; `granted_at` is when
 * it was signed (the token was valid then, so a later `tokens_revoked_at` ends it).
 */
import { z } from "zod";
import { sql } from "../../shared/db/pool.ts";
import { userColumns, userRow, type UserRow } from "../../shared/db/users.ts";
import type { AppDeps, AuthMethod } from "../context.ts";
import { scoped } from "../middleware/authenticate.ts";

const base = { user_id: z.number().int().positive(), granted_at: z.number().int().nonnegative() };

/** The grant a subscription carries in its `channel_data`. */
export const channelGrant = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("jwt"), ...base, jti: z.string().max(200), grant_id: z.string().max(200).nullable(), client_id: z.string().max(200), scope: z.string().max(2000) }),
  z.object({ kind: z.literal("personal_token"), ...base, token_id: z.number().int().positive() }),
]);
export type ChannelGrant = z.infer<typeof channelGrant>;

/** The grant of a caller authorizing a channel now. */
export function grantOf(user: UserRow, auth: AuthMethod): ChannelGrant {
  const granted_at = Date.now();
  if (auth.kind === "personal_token") return { kind: "personal_token", user_id: user.id, granted_at, token_id: auth.tokenId };
  return { kind: "jwt", user_id: user.id, granted_at, jti: auth.jti, grant_id: auth.grantId, client_id: auth.clientId, scope: auth.scope };
}

/** The grant in a subscription's `channel_data`, or undefined when it is not one. */
export function parseGrant(channelData: unknown): ChannelGrant | undefined {
  if (typeof channelData !== "string" || channelData.length > 4096) return undefined;
  try {
    const parsed = channelGrant.safeParse(JSON.parse(channelData));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

const jwtState = userRow.extend({ revoked: z.boolean(), grant_gone: z.boolean() });
const personalState = userRow.extend({ abilities: z.array(z.string()), token_expires_at: z.date().nullable() });

/**
 * The user as the grant's credential lets them act now, or null when the account is gone or
 * disabled or the credential was revoked since the grant.
 */
export async function actingUser(deps: AppDeps, grant: ChannelGrant): Promise<UserRow | null> {
  if (grant.kind === "jwt") {
    const row = await deps.pool.maybeOne(sql.type(jwtState)`
      select ${userColumns}, exists (select 1 from revoked_access_tokens where jti = ${grant.jti}) as revoked,
        (${grant.grant_id}::text is not null
          and not exists (select 1 from oauth_models where model = 'Grant' and id = ${grant.grant_id}::text)) as grant_gone
      from users u where u.id = ${grant.user_id}`);
    if (!row || row.revoked || row.grant_gone || revokedSince(row, grant)) return null;
    if (!(await deps.identity.clients.has(grant.client_id))) return null;
    const { revoked: _revoked, grant_gone: _gone, ...user } = row;
    return scoped(user, grant.scope.split(" ")).user;
  }
  const row = await deps.pool.maybeOne(sql.type(personalState)`
    select ${userColumns}, t.abilities, t.expires_at as token_expires_at
    from personal_access_tokens t join users u on u.id = t.user_id
    where t.id = ${grant.token_id} and t.user_id = ${grant.user_id}`);
  if (!row || revokedSince(row, grant) || (row.token_expires_at && row.token_expires_at.getTime() <= Date.now())) return null;
  const { abilities, token_expires_at: _expires, ...user } = row;
  return scoped(user, abilities).user;
}

/** Disabled, or every token revoked (logout-all-devices, password change) after the grant was signed. */
const revokedSince = (user: UserRow, grant: ChannelGrant) => user.disabled_at !== null || (user.tokens_revoked_at !== null && user.tokens_revoked_at.getTime() > grant.granted_at);
