/**
 * Git connections and pending sign-ins in the database. Tokens and PKCE verifiers are sealed
 * (shared/crypto.ts) and only `openConnectionTokens` opens them; a state is stored as its
 * SHA-256, so a leaked table does not let anyone finish someone else's sign-in.
 */
import { z } from "zod";
import { openText, seal, sha256 } from "../crypto.ts";
import { sql, type CommonQueryMethods } from "../db/pool.ts";
import { gitProviders, type GitHost } from "./providers.ts";

export const connectionRow = z.object({
  id: z.number(),
  user_id: z.number(),
  provider: z.enum(gitProviders),
  instance_url: z.string(),
  /** The REST API base it was made with (null: made before it was recorded). */
  api_base: z.string().nullable(),
  account_id: z.string(),
  account_login: z.string(),
  account_name: z.string().nullable(),
  scopes: z.string().nullable(),
  has_refresh_token: z.boolean(),
  expires_at: z.date().nullable(),
  last_used_at: z.date().nullable(),
  created_at: z.date(),
  updated_at: z.date(),
});
export type ConnectionRow = z.infer<typeof connectionRow>;

const columns = sql.fragment`id, user_id, provider, instance_url, api_base, account_id, account_login, account_name, scopes,
  refresh_token_sealed is not null as has_refresh_token, expires_at, last_used_at, created_at, updated_at`;

/** The caller's connections, newest first. */
export async function listConnections(conn: CommonQueryMethods, userId: number): Promise<readonly ConnectionRow[]> {
  return conn.any(sql.type(connectionRow)`select ${columns} from git_connections where user_id = ${userId} order by id desc`);
}

/** One connection, or null; `lock` row-locks it (a refresh holds it). */
export async function findConnection(conn: CommonQueryMethods, id: number, lock = false): Promise<ConnectionRow | null> {
  return conn.maybeOne(sql.type(connectionRow)`select ${columns} from git_connections where id = ${id} ${lock ? sql.fragment`for update` : sql.fragment``}`);
}

/** What a sign-in stores. */
export interface ConnectionInput {
  userId: number;
  provider: GitHost;
  instanceUrl: string;
  /** The REST API base the sign-in used. */
  apiBase: string;
  account: { id: string; login: string; name: string | null };
  tokens: { accessToken: string; refreshToken: string | null; expiresAt: Date | null; scopes: string | null };
}

/** Stores a connection; signing in to the same account again replaces its tokens. */
export async function upsertConnection(conn: CommonQueryMethods, appKey: Buffer, input: ConnectionInput): Promise<ConnectionRow> {
  const refresh = input.tokens.refreshToken === null ? null : sql.binary(seal(appKey, input.tokens.refreshToken));
  return conn.one(sql.type(connectionRow)`
    insert into git_connections (user_id, provider, instance_url, api_base, account_id, account_login, account_name, scopes, access_token_sealed, refresh_token_sealed, expires_at)
    values (${input.userId}, ${input.provider}, ${input.instanceUrl}, ${input.apiBase}, ${input.account.id}, ${input.account.login}, ${input.account.name},
      ${input.tokens.scopes}, ${sql.binary(seal(appKey, input.tokens.accessToken))}, ${refresh}, ${input.tokens.expiresAt?.toISOString() ?? null})
    on conflict (user_id, provider, instance_url, account_id) do update set
      api_base = excluded.api_base, account_login = excluded.account_login, account_name = excluded.account_name, scopes = excluded.scopes,
      access_token_sealed = excluded.access_token_sealed, refresh_token_sealed = excluded.refresh_token_sealed,
      expires_at = excluded.expires_at, updated_at = now()
    returning ${columns}`);
}

/** Replaces a connection's tokens after a refresh (a host that rotates refresh tokens sends a new one). */
export async function storeRefreshedTokens(conn: CommonQueryMethods, appKey: Buffer, id: number, tokens: ConnectionInput["tokens"]): Promise<void> {
  await conn.query(sql.type(z.object({}))`
    update git_connections set access_token_sealed = ${sql.binary(seal(appKey, tokens.accessToken))},
      refresh_token_sealed = coalesce(${tokens.refreshToken === null ? null : sql.binary(seal(appKey, tokens.refreshToken))}, refresh_token_sealed),
      expires_at = ${tokens.expiresAt?.toISOString() ?? null}, scopes = coalesce(${tokens.scopes}, scopes), updated_at = now()
    where id = ${id}`);
}

/** The opened tokens of a connection; marks it used. */
export async function openConnectionTokens(conn: CommonQueryMethods, appKey: Buffer, id: number): Promise<{ accessToken: string; refreshToken: string | null } | null> {
  const row = await conn.maybeOne(sql.type(z.object({ access: z.instanceof(Buffer), refresh: z.instanceof(Buffer).nullable() }))`
    update git_connections set last_used_at = now() where id = ${id}
    returning access_token_sealed as access, refresh_token_sealed as refresh`);
  return row && { accessToken: openText(appKey, row.access), refreshToken: row.refresh ? openText(appKey, row.refresh) : null };
}

/** Deletes a connection of `userId`; resolves to whether there was one. */
export async function deleteConnection(conn: CommonQueryMethods, id: number, userId: number): Promise<boolean> {
  return (await conn.maybeOne(sql.type(z.object({ id: z.number() }))`delete from git_connections where id = ${id} and user_id = ${userId} returning id`)) !== null;
}

/** How long a sign-in may take between the authorization URL and the callback. */
export const STATE_TTL_MS = 10 * 60 * 1000;

const stateHash = (state: string) => sha256(state).toString("hex");

/** Records a pending sign-in of `userId`; drops the user's expired ones. */
export async function insertState(conn: CommonQueryMethods, appKey: Buffer, input: { state: string; userId: number; provider: GitHost; verifier: string | null; redirectUri: string }): Promise<Date> {
  await conn.query(sql.type(z.object({}))`delete from git_oauth_states where user_id = ${input.userId} and expires_at < now() - interval '1 day'`);
  const expiresAt = new Date(Date.now() + STATE_TTL_MS);
  await conn.query(sql.type(z.object({}))`
    insert into git_oauth_states (state_hash, user_id, provider, code_verifier_sealed, redirect_uri, expires_at)
    values (${stateHash(input.state)}, ${input.userId}, ${input.provider}, ${input.verifier === null ? null : sql.binary(seal(appKey, input.verifier))},
      ${input.redirectUri}, ${expiresAt.toISOString()})`);
  return expiresAt;
}

/**
 * Uses a pending sign-in: the state must be `userId`'s, for `provider`, unexpired and unused;
 * it is marked used whatever happens next, so it works once. Null when it does not qualify.
 */
export async function consumeState(conn: CommonQueryMethods, appKey: Buffer, state: string, userId: number, provider: GitHost): Promise<{ verifier: string | null; redirectUri: string } | null> {
  const row = await conn.maybeOne(sql.type(z.object({ verifier: z.instanceof(Buffer).nullable(), redirect_uri: z.string() }))`
    update git_oauth_states set used_at = now()
    where state_hash = ${stateHash(state)} and user_id = ${userId} and provider = ${provider} and used_at is null and expires_at > now()
    returning code_verifier_sealed as verifier, redirect_uri`);
  return row && { verifier: row.verifier ? openText(appKey, row.verifier) : null, redirectUri: row.redirect_uri };
}
