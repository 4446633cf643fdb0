/**
 * Two-factor authentication (TOTP, RFC 6238: SHA-1, 6 digits, 30 s, ±1 step) and recovery
 * codes. A TOTP code is accepted once: the step it belongs to is recorded and older or
 * equal steps are refused, so a code seen over a shoulder cannot be replayed.
 */
import { randomBytes } from "node:crypto";
import { Secret, TOTP } from "otpauth";
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods } from "../db/pool.ts";
import { sha256 } from "../crypto.ts";

const ISSUER = "SchemaForge";
const PERIOD = 30;

/** A new base32 TOTP secret (160 bits). */
export const newTotpSecret = () => new Secret({ size: 20 }).base32;

/** The otpauth:// URI an authenticator app scans. */
export function otpauthUri(secretBase32: string, account: string): string {
  return new TOTP({ issuer: ISSUER, label: account, secret: Secret.fromBase32(secretBase32), period: PERIOD }).toString();
}

/** The time step `code` matches (±1 step), or null. */
export function matchTotp(secretBase32: string, code: string, now = Date.now()): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const totp = new TOTP({ secret: Secret.fromBase32(secretBase32), period: PERIOD });
  const delta = totp.validate({ token: code, window: 1, timestamp: now });
  return delta === null ? null : Math.floor(now / 1000 / PERIOD) + delta;
}

/** Accepts `code` for `userId` once: records its step unless an equal or later step was used. */
export async function consumeTotpStep(conn: CommonQueryMethods, userId: number, step: number): Promise<boolean> {
  const row = await conn.maybeOne(sql.type(z.object({ id: z.number() }))`
    update users set two_factor_last_step = ${step}
    where id = ${userId} and (two_factor_last_step is null or two_factor_last_step < ${step})
    returning id`);
  return row !== null;
}

/** Ten fresh recovery codes (shown once), replacing the old ones. */
export async function replaceRecoveryCodes(conn: CommonQueryMethods, userId: number): Promise<string[]> {
  const codes = Array.from({ length: 10 }, () => {
    const raw = randomBytes(5).toString("hex");
    return `${raw.slice(0, 5)}-${raw.slice(5)}`;
  });
  await conn.query(sql.type(ignoredRow)`delete from two_factor_recovery_codes where user_id = ${userId}`);
  for (const code of codes) {
    await conn.query(sql.type(ignoredRow)`
      insert into two_factor_recovery_codes (user_id, code_hash) values (${userId}, ${sql.binary(sha256(code))})`);
  }
  return codes;
}

/** Uses a recovery code once; resolves to whether it was valid and unused. */
export async function useRecoveryCode(conn: CommonQueryMethods, userId: number, code: string): Promise<boolean> {
  const normalized = code.trim().toLowerCase();
  if (!/^[0-9a-f]{5}-[0-9a-f]{5}$/.test(normalized)) return false;
  const row = await conn.maybeOne(sql.type(z.object({ id: z.number() }))`
    update two_factor_recovery_codes set used_at = now()
    where user_id = ${userId} and code_hash = ${sql.binary(sha256(normalized))} and used_at is null
    returning id`);
  return row !== null;
}

export async function remainingRecoveryCodes(conn: CommonQueryMethods, userId: number): Promise<number> {
  return conn.oneFirst(sql.type(z.object({ count: z.number() }))`
    select count(*)::int as count from two_factor_recovery_codes where user_id = ${userId} and used_at is null`);
}
