/**
 * Access tokens as the API sees them: verification of the RS256 JWTs the OAuth server
 * issues (signature with the cached public keys, header typ JWT, issuer, audience = a
 * known client, exp and nbf), and minting of the same kind of token for POST /auth/login
 * and the other first-party routes that answer with an access token.
 */
import { randomUUID } from "node:crypto";
import { decodeProtectedHeader, jwtVerify, SignJWT, type JWTPayload } from "jose";
import { findOAuthClient, listActiveClientIds } from "../../shared/db/oauth.ts";
import type { DatabasePool } from "../../shared/db/pool.ts";
import type { SigningKeys } from "./keys.ts";

export interface AccessClaims extends JWTPayload {
  sub: string;
  jti: string;
  iat: number;
  exp: number;
  scope: string;
  client_id?: string;
  /** The OAuth grant (session) the token belongs to, when it came from the token endpoint. */
  gid?: string;
  /** Issue time in milliseconds, so revocations within the same second are exact. */
  iat_ms?: number;
}

/**
 * Known client ids. A token naming an id we have not seen is checked against the database
 * once (clients created by the CLI work at once); unknown ids are remembered for ten
 * seconds so a flood of forged audiences costs one query per id, not one per request.
 */
export class ClientIdCache {
  readonly #pool: DatabasePool;
  #ids = new Set<string>();
  readonly #unknown = new Map<string, number>();

  constructor(pool: DatabasePool) {
    this.#pool = pool;
  }

  /** Whether `clientId` is known active without asking the database (false: ask `has`). */
  knows(clientId: string): boolean {
    return this.#ids.has(clientId);
  }

  async has(clientId: string): Promise<boolean> {
    if (this.#ids.has(clientId)) return true;
    const until = this.#unknown.get(clientId);
    if (until !== undefined && until > Date.now()) return false;
    const row = await findOAuthClient(this.#pool, clientId);
    if (row && !row.revoked_at) {
      this.#ids.add(clientId);
      return true;
    }
    if (this.#unknown.size > 10_000) this.#unknown.clear();
    this.#unknown.set(clientId, Date.now() + 10_000);
    return false;
  }

  async reload(): Promise<void> {
    this.#ids = new Set(await listActiveClientIds(this.#pool));
    this.#unknown.clear();
  }

  /** Drops what is known of `clientId` (it was revoked or changed), so the next check reads the database. */
  forget(clientId: string): void {
    this.#ids.delete(clientId);
    this.#unknown.delete(clientId);
  }
}

/** The NOTIFY channel on which a revoked or deleted client's id is announced (migration 0015). */
export const CLIENT_CHANGES_CHANNEL = "oauth_clients";

/**
 * Verifies access tokens for one issuer and key set, remembering tokens whose signature
 * already verified until they expire: a client sends the same token with every request,
 * and an RS256 verification costs more than the rest of the authentication. Only the
 * cryptographic checks are cached; revocation (of the token, and of its client through the
 * client cache, which NOTIFY keeps current) is checked on every request.
 */
export class AccessTokenVerifier {
  readonly #keys: SigningKeys;
  readonly #issuer: string;
  readonly #clients: ClientIdCache;
  readonly #verified = new Map<string, AccessClaims>();
  static readonly cacheSize = 20_000;

  constructor(keys: SigningKeys, issuer: string, clients: ClientIdCache) {
    this.#keys = keys;
    this.#issuer = issuer;
    this.#clients = clients;
  }

  /**
   * The claims of `token` when its signature verified before, it has not expired and its
   * client is known active, without a promise (most requests); undefined when `verify` must
   * decide. A token in the cache came out of `bearerToken` once, so it is well formed.
   */
  verifiedNow(token: string): AccessClaims | undefined {
    const hit = this.#verified.get(token);
    if (hit && hit.exp * 1000 > Date.now() && this.#clients.knows(audienceOf(hit))) return hit;
    return undefined;
  }

  /** The token's claims, or null when it is not one of ours or not valid now. */
  async verify(token: string): Promise<AccessClaims | null> {
    const hit = this.#verified.get(token);
    if (hit) {
      const now = Date.now();
      // The client may have been revoked since the signature was checked (a set lookup while it is active).
      if (hit.exp * 1000 > now && (await this.#clients.has(audienceOf(hit)))) return hit;
      this.#verified.delete(token);
      return null;
    }
    const claims = await verifyUncached(token, this.#keys, this.#issuer, this.#clients);
    if (claims) this.#remember(token, claims);
    return claims;
  }

  #remember(token: string, claims: AccessClaims): void {
    if (this.#verified.size >= AccessTokenVerifier.cacheSize) {
      let n = AccessTokenVerifier.cacheSize / 4; // drop the oldest quarter (insertion order)
      for (const key of this.#verified.keys()) {
        this.#verified.delete(key);
        if (--n <= 0) break;
      }
    }
    this.#verified.set(token, claims);
  }
}

const audienceOf = (claims: AccessClaims): string => (Array.isArray(claims.aud) ? claims.aud[0]! : claims.aud!);

/** Verifies signature, header and claims. */
async function verifyUncached(
  token: string,
  keys: SigningKeys,
  issuer: string,
  clients: ClientIdCache,
): Promise<AccessClaims | null> {
  let header;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    return null;
  }
  if (header.alg !== "RS256" || header.typ !== "JWT" || typeof header.kid !== "string") return null;
  const key = keys.publicKeys.get(header.kid);
  if (!key) return null;
  try {
    const { payload } = await jwtVerify(token, key, {
      issuer,
      algorithms: ["RS256"],
      typ: "JWT",
      requiredClaims: ["sub", "jti", "iat", "exp", "nbf", "aud"],
      clockTolerance: 5,
    });
    const aud = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
    if (aud.length !== 1 || typeof aud[0] !== "string" || !(await clients.has(aud[0]))) return null;
    if (!/^\d{1,18}$/.test(String(payload.sub))) return null;
    return payload as AccessClaims;
  } catch {
    return null;
  }
}

export interface MintedToken {
  token: string;
  jti: string;
  expiresIn: number;
}

/** Issues an access token for a user, as the OAuth server would, for `clientId`. */
export async function mintAccessToken(
  keys: SigningKeys,
  issuer: string,
  clientId: string,
  userId: number,
  scope: string,
  ttlS: number,
): Promise<MintedToken> {
  const nowMs = Date.now();
  const iat = Math.floor(nowMs / 1000);
  const jti = randomUUID().replace(/-/g, "");
  const token = await new SignJWT({ scope, client_id: clientId, iat_ms: nowMs })
    .setProtectedHeader({ alg: "RS256", typ: "JWT", kid: keys.signing.kid })
    .setIssuer(issuer)
    .setAudience(clientId)
    .setSubject(String(userId))
    .setJti(jti)
    .setIssuedAt(iat)
    .setNotBefore(iat)
    .setExpirationTime(iat + ttlS)
    .sign(keys.signing.key);
  return { token, jti, expiresIn: ttlS };
}

/** Milliseconds at which a token was issued (iat_ms when present, else the end of its iat second). */
export const issuedAtMs = (claims: AccessClaims) => claims.iat_ms ?? claims.iat * 1000 + 999;
