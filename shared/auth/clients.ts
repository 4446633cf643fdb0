/**
 * OAuth clients: the first-party password client and the clients the CLI creates. Secrets
 * are stored encrypted under APP_KEY.
 *
 * The first-party client follows OAUTH_CLIENT_ID / OAUTH_CLIENT_SECRET, created or updated at
 * start to match. In development the pair is generated into `.data/secrets.json` when unset
 * (shared/localData.ts), so it survives restarts and can be looked up. Production never
 * generates one: it needs the pair, or a first-party client already in the database. A
 * process given neither (tests that bring their own configuration) creates one in the
 * database and logs its credentials.
 */
import { randomBytes } from "node:crypto";
import { ConfigError, type Config } from "../config.ts";
import { seal, openText } from "../crypto.ts";
import { findFirstPartyClient, findOAuthClient, insertOAuthClient, upsertOAuthClient } from "../db/oauth.ts";
import type { DatabasePool } from "../db/pool.ts";
import { GENERATED_CLIENT_ID } from "../localData.ts";
import type { Logger } from "../logger.ts";

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
}

/** A new random client secret. */
export const newClientSecret = () => randomBytes(32).toString("base64url");

const FIRST_PARTY_NAME = "First-party application";

/** Refusal of `oauth:client` to take an id that is in use. */
export class ClientIdTaken extends Error {}

/**
 * Creates another client (the CLI's `oauth:client`); returns its credentials, shown once.
 * @throws ClientIdTaken when the id is the first-party client's or belongs to an existing client:
 * overwriting would silently change a secret that applications rely on.
 */
export async function createClient(pool: DatabasePool, config: Config, input: { clientId?: string; name: string }): Promise<ClientCredentials> {
  const clientId = input.clientId ?? `client-${randomBytes(8).toString("hex")}`;
  const firstParty = `"${clientId}" is the first-party client, which follows OAUTH_CLIENT_ID and OAUTH_CLIENT_SECRET (in development, .data/secrets.json); choose another --id.`;
  if (clientId === config.oauth.clientId) throw new ClientIdTaken(firstParty);
  const clientSecret = newClientSecret();
  const row = await insertOAuthClient(pool, { clientId, name: input.name, secret: seal(config.appKey, clientSecret) });
  if (!row) {
    const existing = await findOAuthClient(pool, clientId);
    throw new ClientIdTaken(existing?.first_party ? firstParty : `a client "${clientId}" already exists; choose another --id.`);
  }
  return { clientId, clientSecret };
}

/**
 * Makes sure the first-party client exists (from the environment when configured).
 * @throws ConfigError in production when neither the environment nor the database has one.
 */
export async function ensureFirstPartyClient(pool: DatabasePool, config: Config, log: Logger): Promise<ClientCredentials> {
  const { clientId, clientSecret } = config.oauth;
  if (clientId && clientSecret) {
    await upsertOAuthClient(pool, { clientId, name: FIRST_PARTY_NAME, secret: seal(config.appKey, clientSecret), firstParty: true });
    return { clientId, clientSecret };
  }
  const existing = await findFirstPartyClient(pool);
  if (existing) return { clientId: existing.client_id, clientSecret: openText(config.appKey, existing.secret) };
  if (config.env === "production") {
    throw new ConfigError([
      "OAUTH_CLIENT_ID and OAUTH_CLIENT_SECRET are missing: required in production until a first-party client exists (production never generates one)",
    ]);
  }
  const created = { clientId: GENERATED_CLIENT_ID, clientSecret: newClientSecret() };
  await upsertOAuthClient(pool, { clientId: created.clientId, name: FIRST_PARTY_NAME, secret: seal(config.appKey, created.clientSecret), firstParty: true });
  log.warn(
    { client_id: created.clientId },
    `created the first-party OAuth client: client_id=${created.clientId} client_secret=${created.clientSecret} (set OAUTH_CLIENT_ID and OAUTH_CLIENT_SECRET to keep one across databases)`,
  );
  return created;
}
