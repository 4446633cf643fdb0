/**
 * oidc-provider's storage adapter on PostgreSQL (`oauth_models`). Clients are read from
 * `oauth_clients` instead, with their secret decrypted, so that clients created by the CLI
 * work at once in every web process.
 */
import { errors, type Adapter, type AdapterPayload } from "oidc-provider";
import { z } from "zod";
import { openText } from "../../shared/crypto.ts";
import { findOAuthClient, revokeOAuthGrant } from "../../shared/db/oauth.ts";
import { ignoredRow, sql, type DatabasePool } from "../../shared/db/pool.ts";

const modelRow = z.object({ payload: z.record(z.string(), z.unknown()), consumed_at: z.date().nullable() });

/** Returns the adapter constructor oidc-provider instantiates once per model name. */
export function postgresAdapter(pool: DatabasePool, appKey: Buffer) {
  return class PostgresAdapter implements Adapter {
    readonly model: string;

    constructor(model: string) {
      this.model = model;
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
      const expiresAt = expiresIn ? new Date(Date.now() + expiresIn * 1000).toISOString() : null;
      await pool.query(sql.type(ignoredRow)`
        insert into oauth_models (model, id, payload, grant_id, account_id, uid, user_code, expires_at)
        values (${this.model}, ${id}, ${sql.jsonb(payload as never)}, ${payload.grantId ?? null}, ${payload.accountId ?? null},
          ${payload.uid ?? null}, ${payload.userCode ?? null}, ${expiresAt})
        on conflict (model, id) do update set payload = excluded.payload, grant_id = excluded.grant_id,
          account_id = excluded.account_id, uid = excluded.uid, user_code = excluded.user_code, expires_at = excluded.expires_at`);
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      if (this.model === "Client") return this.#findClient(id);
      return this.#findBy(sql.fragment`id = ${id}`);
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return this.#findBy(sql.fragment`uid = ${uid}`);
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return this.#findBy(sql.fragment`user_code = ${userCode}`);
    }

    /**
     * Marks a refresh token used, once: of requests presenting one token at once, oidc-provider
     * lets all pass its `consumed` check before any consumes it, so each would rotate it and
     * the family would fork into live tokens that replay detection never links. The one that
     * comes second here is a reuse, answered as the provider answers a later one: its grant
     * (the whole family, access tokens included) is revoked and the request refused.
     */
    async consume(id: string): Promise<void> {
      const row = await pool.maybeOne(sql.type(z.object({ grant_id: z.string().nullable() }))`
        update oauth_models set consumed_at = now() where model = ${this.model} and id = ${id} and consumed_at is null
        returning grant_id`);
      if (row) return;
      const grantId = await pool.maybeOneFirst(sql.type(z.object({ grant_id: z.string().nullable() }))`
        select grant_id from oauth_models where model = ${this.model} and id = ${id}`);
      if (grantId) await revokeOAuthGrant(pool, grantId);
      throw new errors.InvalidGrant(`${this.model === "RefreshToken" ? "refresh token" : "grant"} already used`);
    }

    async destroy(id: string): Promise<void> {
      await pool.query(sql.type(ignoredRow)`delete from oauth_models where model = ${this.model} and id = ${id}`);
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await pool.query(sql.type(ignoredRow)`delete from oauth_models where grant_id = ${grantId}`);
    }

    async #findBy(where: ReturnType<typeof sql.fragment>): Promise<AdapterPayload | undefined> {
      const row = await pool.maybeOne(sql.type(modelRow)`
        select payload, consumed_at from oauth_models
        where model = ${this.model} and ${where} and (expires_at is null or expires_at > now())`);
      if (!row) return undefined;
      const payload = row.payload as AdapterPayload;
      return row.consumed_at ? { ...payload, consumed: Math.floor(row.consumed_at.getTime() / 1000) } : payload;
    }

    async #findClient(clientId: string): Promise<AdapterPayload | undefined> {
      const row = await findOAuthClient(pool, clientId);
      if (!row || row.revoked_at) return undefined;
      return {
        client_id: row.client_id,
        client_name: row.name,
        client_secret: openText(appKey, row.secret),
        grant_types: row.grant_types,
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: "client_secret_post",
      };
    }
  };
}
