/**
 * The second step of a two-factor login: the `two_factor_token` handed out by
 * POST /auth/login (random, stored hashed, 10 minutes, one successful use, five wrong
 * codes at most), and trusted devices (device id + browser remembered for 30 days).
 *
 * A trusted device skips the second factor only when both match: the device id (stored
 * hashed) and the browser exactly as it was named when the device was trusted. A login that
 * names no browser never matches a device trusted with one, so a copied device id alone, sent
 * by another client, does not get past the second factor.
 */
import { z } from "zod";
import { randomToken, sha256 } from "../crypto.ts";
import { ignoredRow, sql, type CommonQueryMethods } from "../db/pool.ts";

export const CHALLENGE_TTL_S = 10 * 60;
export const MAX_CHALLENGE_ATTEMPTS = 5;
export const TRUSTED_DEVICE_DAYS = 30;

/** A device as a login names it. */
export interface DeviceIdentity {
  deviceId: string | null;
  browser: string | null;
}

/** Starts a challenge for the device the login named; returns the token for the client. */
export async function createChallenge(conn: CommonQueryMethods, userId: number, device: DeviceIdentity): Promise<string> {
  const token = randomToken(32);
  await conn.query(sql.type(ignoredRow)`
    insert into two_factor_challenges (token_hash, user_id, device_id, browser, expires_at)
    values (${sql.binary(sha256(token))}, ${userId}, ${device.deviceId}, ${device.browser}, now() + make_interval(secs => ${CHALLENGE_TTL_S}))`);
  return token;
}

const challengeRow = z.object({ user_id: z.number(), device_id: z.string().nullable(), browser: z.string().nullable(), attempts: z.number(), created_at: z.date() });
export type Challenge = z.infer<typeof challengeRow> & { tokenHash: Buffer };

/** The open challenge for `token`, locked for the rest of the transaction; null when spent or expired. */
export async function findOpenChallenge(conn: CommonQueryMethods, token: string): Promise<Challenge | null> {
  const tokenHash = sha256(token);
  const row = await conn.maybeOne(sql.type(challengeRow)`
    select user_id, device_id, browser, attempts, created_at from two_factor_challenges
    where token_hash = ${sql.binary(tokenHash)} and used_at is null and expires_at > now() and attempts < ${MAX_CHALLENGE_ATTEMPTS}
    for update`);
  return row ? { ...row, tokenHash } : null;
}

export async function recordWrongCode(conn: CommonQueryMethods, challenge: Challenge): Promise<void> {
  await conn.query(sql.type(ignoredRow)`
    update two_factor_challenges set attempts = attempts + 1 where token_hash = ${sql.binary(challenge.tokenHash)}`);
}

export async function closeChallenge(conn: CommonQueryMethods, challenge: Challenge): Promise<void> {
  await conn.query(sql.type(ignoredRow)`update two_factor_challenges set used_at = now() where token_hash = ${sql.binary(challenge.tokenHash)}`);
}

/**
 * Trust state of a device: trusted now, trusted once but expired, or unknown. A device id
 * trusted with another browser (or with one when the login names none) is unknown.
 */
export async function deviceTrust(conn: CommonQueryMethods, userId: number, device: DeviceIdentity): Promise<"trusted" | "expired" | "unknown"> {
  const { deviceId, browser } = device;
  if (!deviceId) return "unknown";
  const row = await conn.maybeOne(sql.type(z.object({ valid: z.boolean() }))`
    select expires_at > now() as valid from trusted_devices
    where user_id = ${userId} and device_hash = ${sql.binary(sha256(deviceId))} and browser is not distinct from ${browser}::text`);
  if (!row) return "unknown";
  if (row.valid) {
    await conn.query(sql.type(ignoredRow)`
      update trusted_devices set last_used_at = now() where user_id = ${userId} and device_hash = ${sql.binary(sha256(deviceId))}`);
  }
  return row.valid ? "trusted" : "expired";
}

/** Trusts a device (its id and browser) for TRUSTED_DEVICE_DAYS; trusting it again renews it, with the browser named now. */
export async function trustDevice(conn: CommonQueryMethods, userId: number, deviceId: string, browser: string | null): Promise<void> {
  await conn.query(sql.type(ignoredRow)`
    insert into trusted_devices (user_id, device_hash, browser, expires_at)
    values (${userId}, ${sql.binary(sha256(deviceId))}, ${browser}, now() + make_interval(days => ${TRUSTED_DEVICE_DAYS}))
    on conflict (user_id, device_hash) do update set browser = excluded.browser, expires_at = excluded.expires_at`);
}
