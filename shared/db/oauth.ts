/**
 * Queries of the OAuth server's state: clients, signing keys and oidc-provider's models.
 */
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods } from "./pool.ts";

export const oauthClientRow = z.object({
  client_id: z.string(),
  name: z.string(),
  secret: z.instanceof(Buffer),
  grant_types: z.array(z.string()),
  first_party: z.boolean(),
  created_at: z.date(),
  revoked_at: z.date().nullable(),
});
export type OAuthClientRow = z.infer<typeof oauthClientRow>;

const clientColumns = sql.fragment`client_id, name, secret, grant_types, first_party, created_at, revoked_at`;

export async function findOAuthClient(conn: CommonQueryMethods, clientId: string): Promise<OAuthClientRow | null> {
  return conn.maybeOne(sql.type(oauthClientRow)`select ${clientColumns} from oauth_clients where client_id = ${clientId}`);
}

export async function listActiveClientIds(conn: CommonQueryMethods): Promise<readonly string[]> {
  return conn.anyFirst(sql.type(z.object({ client_id: z.string() }))`select client_id from oauth_clients where revoked_at is null`);
}

/** Creates or updates a client (the first-party client is kept in step with its env settings). */
export async function upsertOAuthClient(
  conn: CommonQueryMethods,
  input: { clientId: string; name: string; secret: Buffer; firstParty: boolean; grantTypes?: string[] },
): Promise<OAuthClientRow> {
  return conn.one(sql.type(oauthClientRow)`
    insert into oauth_clients (client_id, name, secret, first_party, grant_types)
    values (${input.clientId}, ${input.name}, ${sql.binary(input.secret)}, ${input.firstParty},
      ${sql.array(input.grantTypes ?? ["password", "refresh_token"], "text")})
    on conflict (client_id) do update set name = excluded.name, secret = excluded.secret,
      first_party = excluded.first_party, grant_types = excluded.grant_types, revoked_at = null
    returning ${clientColumns}`);
}

/** Inserts a client unless its id is taken; null when it is. */
export async function insertOAuthClient(
  conn: CommonQueryMethods,
  input: { clientId: string; name: string; secret: Buffer; grantTypes?: string[] },
): Promise<OAuthClientRow | null> {
  return conn.maybeOne(sql.type(oauthClientRow)`
    insert into oauth_clients (client_id, name, secret, first_party, grant_types)
    values (${input.clientId}, ${input.name}, ${sql.binary(input.secret)}, false,
      ${sql.array(input.grantTypes ?? ["password", "refresh_token"], "text")})
    on conflict (client_id) do nothing
    returning ${clientColumns}`);
}

export async function findFirstPartyClient(conn: CommonQueryMethods): Promise<OAuthClientRow | null> {
  return conn.maybeOne(sql.type(oauthClientRow)`
    select ${clientColumns} from oauth_clients where first_party and revoked_at is null order by created_at limit 1`);
}

const signingKeyRow = z.object({ kid: z.string(), private_jwk: z.instanceof(Buffer) });

export async function listSigningKeys(conn: CommonQueryMethods) {
  return conn.any(sql.type(signingKeyRow)`select kid, private_jwk from oauth_signing_keys where retired_at is null order by created_at desc`);
}

export async function insertSigningKey(conn: CommonQueryMethods, kid: string, sealedJwk: Buffer): Promise<void> {
  await conn.query(sql.type(ignoredRow)`insert into oauth_signing_keys (kid, private_jwk) values (${kid}, ${sql.binary(sealedJwk)})`);
}

/** Deletes every grant and token oidc-provider stored for an account (refresh tokens stop working). */
export async function revokeOAuthGrantsOfAccount(conn: CommonQueryMethods, userId: number): Promise<void> {
  await conn.query(sql.type(ignoredRow)`
    delete from oauth_models where grant_id in (select grant_id from oauth_models where account_id = ${String(userId)} and grant_id is not null)
      or account_id = ${String(userId)}`);
}

/** Deletes the models of one grant (a logout ends that session's refresh tokens). */
export async function revokeOAuthGrant(conn: CommonQueryMethods, grantId: string): Promise<void> {
  await conn.query(sql.type(ignoredRow)`delete from oauth_models where grant_id = ${grantId} or (model = 'Grant' and id = ${grantId})`);
}

/**
 * Ends an access token early: its jti is refused until it would have expired. Nothing is
 * recorded when the user is gone (a closed account's tokens no longer authenticate anyway).
 */
export async function revokeAccessToken(conn: CommonQueryMethods, jti: string, userId: number, expiresAt: Date): Promise<void> {
  await conn.query(sql.type(ignoredRow)`
    insert into revoked_access_tokens (jti, user_id, expires_at)
    select ${jti}, u.id, ${expiresAt.toISOString()} from users u where u.id = ${userId}
    on conflict (jti) do nothing`);
}
