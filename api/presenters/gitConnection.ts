/**
 * A git connection as its owner sees it: the account and host, never a token (only
 * whether a refresh token is held and when the access token expires).
 */
import { z } from "zod";
import { gitProviders } from "../../shared/git/providers.ts";
import type { ConnectionRow } from "../../shared/git/store.ts";

export const gitConnectionResource = z.object({
  id: z.number(),
  provider: z.enum(gitProviders),
  instance_url: z.string(),
  account: z.object({ id: z.string(), login: z.string(), name: z.string().nullable() }),
  scopes: z.string().nullable(),
  has_refresh_token: z.boolean(),
  expires_at: z.string().nullable(),
  last_used_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

/** A connection. */
export function presentGitConnection(row: ConnectionRow): z.infer<typeof gitConnectionResource> {
  return {
    id: row.id,
    provider: row.provider,
    instance_url: row.instance_url,
    account: { id: row.account_id, login: row.account_login, name: row.account_name },
    scopes: row.scopes,
    has_refresh_token: row.has_refresh_token,
    expires_at: row.expires_at?.toISOString() ?? null,
    last_used_at: row.last_used_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
