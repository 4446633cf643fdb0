/**
 * The OAuth server's RS256 signing keys: from OAUTH_JWKS (a private JWK set) when given,
 * otherwise from the database, generated on first start. Generation takes a transaction
 * advisory lock, so web processes starting together agree on one key.
 */
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK, type CryptoKey } from "jose";
import { z } from "zod";
import { openText, seal } from "../../shared/crypto.ts";
import { insertSigningKey, listSigningKeys } from "../../shared/db/oauth.ts";
import { ignoredRow, sql, type DatabasePool } from "../../shared/db/pool.ts";

export interface SigningKeys {
  /** Private keys for oidc-provider (first one signs). */
  privateJwks: JWK[];
  /** Public keys by kid, imported once for verification. */
  publicKeys: Map<string, CryptoKey>;
  /** The signing key for tokens minted outside oidc-provider (POST /auth/login). */
  signing: { kid: string; key: CryptoKey };
}

const jwkSet = z.object({ keys: z.array(z.record(z.string(), z.unknown())).min(1) });

async function generate(): Promise<JWK> {
  const { privateKey } = await generateKeyPair("RS256", { modulusLength: 2048, extractable: true });
  const jwk = await exportJWK(privateKey);
  jwk.kid = await calculateJwkThumbprint(jwk);
  jwk.alg = "RS256";
  jwk.use = "sig";
  return jwk;
}

async function fromDatabase(pool: DatabasePool, appKey: Buffer): Promise<JWK[]> {
  const existing = await listSigningKeys(pool);
  if (existing.length) return existing.map((row) => JSON.parse(openText(appKey, row.private_jwk)) as JWK);
  return pool.transaction(async (tx) => {
    await tx.query(sql.type(ignoredRow)`select pg_advisory_xact_lock(7320151002)`);
    const again = await listSigningKeys(tx);
    if (again.length) return again.map((row) => JSON.parse(openText(appKey, row.private_jwk)) as JWK);
    const jwk = await generate();
    await insertSigningKey(tx, jwk.kid!, seal(appKey, JSON.stringify(jwk)));
    return [jwk];
  });
}

/** Loads (or creates) the signing keys. @throws when OAUTH_JWKS is malformed. */
export async function loadSigningKeys(pool: DatabasePool, appKey: Buffer, envJwks: string | undefined): Promise<SigningKeys> {
  const privateJwks = envJwks ? (jwkSet.parse(JSON.parse(envJwks)).keys as JWK[]) : await fromDatabase(pool, appKey);
  const publicKeys = new Map<string, CryptoKey>();
  for (const jwk of privateJwks) {
    if (jwk.kty !== "RSA" || !jwk.d) throw new Error("OAUTH_JWKS must hold private RSA keys");
    jwk.kid ??= await calculateJwkThumbprint(jwk);
    jwk.alg = "RS256";
    const { n, e, kty, kid } = jwk;
    publicKeys.set(kid, (await importJWK({ n, e, kty, alg: "RS256" }, "RS256")) as CryptoKey);
  }
  const first = privateJwks[0]!;
  return { privateJwks, publicKeys, signing: { kid: first.kid!, key: (await importJWK(first, "RS256")) as CryptoKey } };
}
