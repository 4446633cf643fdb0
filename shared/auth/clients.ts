/**
 * OAuth clients: the first-party password client (kept in step with OAUTH_CLIENT_ID /
 * OAUTH_CLIENT_SECRET, or created once and printed when they are unset) and the clients
 * the CLI creates. Secrets are stored encrypted under APP_KEY.
 */
import { randomBytes } from "node:crypto";
import type { Config } from "../config.ts";
import { seal, openText } from "../crypto.ts";
import { findFirstPartyClient, upsertOAuthClient } from "../db/oauth.ts";
import type { DatabasePool } from "../db/pool.ts";
import type { Logger } from "../logger.ts";

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
}

/** A new random client secret. */
export const newClientSecret = () => randomBytes(32).toString("base64url");

/** Creates or updates a client; returns its credentials (the secret is shown once to the operator). */
export async function createClient(pool: DatabasePool, appKey: Buffer, input: { clientId?: string; name: string; secret?: string; firstParty?: boolean }): Promise<ClientCredentials> {
  const clientId = input.clientId ?? `client-${randomBytes(8).toString("hex")}`;
  const clientSecret = input.secret ?? newClientSecret();
  await upsertOAuthClient(pool, { clientId, name: input.name, secret: seal(appKey, clientSecret), firstParty: input.firstParty ?? false });
  return { clientId, clientSecret };
}

/** Makes sure the first-party client exists (from the environment when configured). */
export async function ensureFirstPartyClient(pool: DatabasePool, config: Config, log: Logger): Promise<ClientCredentials> {
  const { clientId, clientSecret } = config.oauth;
  if (clientId && clientSecret) {
    return createClient(pool, config.appKey, { clientId, secret: clientSecret, name: "First-party application", firstParty: true });
  }
  const existing = await findFirstPartyClient(pool);
  if (existing) return { clientId: existing.client_id, clientSecret: openText(config.appKey, existing.secret) };
  const created = await createClient(pool, config.appKey, { clientId: "first-party", name: "First-party application", firstParty: true });
  log.warn(
    { client_id: created.clientId },
    `created the first-party OAuth client: client_id=${created.clientId} client_secret=${created.clientSecret} (shown once; set OAUTH_CLIENT_ID and OAUTH_CLIENT_SECRET to choose them)`,
  );
  return created;
}
