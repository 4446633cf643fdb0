/**
 * A git connection as its owner sees it: the account and host, never a token (only
 * whether a refresh token is held and when the access token expires), and whether it must be
 * connected again before use (`needs_reconnection`, with the reason).
 */
import { z } from "zod";
import { gitProviders } from "../../shared/git/providers.ts";
import type { Config } from "../../shared/config.ts";
import { connectionProblem } from "../../shared/git/connectionState.ts";
import type { ConnectionRow } from "../../shared/git/store.ts";

export const gitConnectionResource = z.object({
  id: z.number(),
  provider: z.enum(gitProviders),
  instance_url: z.string(),
  account: z.object({ id: z.string(), login: z.string(), name: z.string().nullable() }),
  scopes: z.string().nullable(),
  has_refresh_token: z.boolean(),
  /** Whether the connection must be made again before use (another instance is configured now, sign-in is off, the token expired for good). */
  needs_reconnection: z.boolean(),
  /** Why, when it does; null otherwise. */
  reconnection_reason: z.string().nullable(),
  expires_at: z.string().nullable(),
  last_used_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

/** A connection, with whether it can be used under the current configuration. */
export function presentGitConnection(row: ConnectionRow, config: Pick<Config, "git">): z.infer<typeof gitConnectionResource> {
  const problem = connectionProblem(config, row);
  return {
    id: row.id,
    provider: row.provider,
    instance_url: row.instance_url,
    account: { id: row.account_id, login: row.account_login, name: row.account_name },
    scopes: row.scopes,
    has_refresh_token: row.has_refresh_token,
    needs_reconnection: problem !== null,
    reconnection_reason: problem?.message ?? null,
    expires_at: row.expires_at?.toISOString() ?? null,
    last_used_at: row.last_used_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
