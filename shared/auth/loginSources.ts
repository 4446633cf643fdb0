/**
 * Known sign-in sources: the addresses an account signed in from successfully within
 * KNOWN_SOURCE_DAYS, and its trusted devices. The lockout of an e-mail across all addresses
 * slows guesses spread over many addresses, but anyone can trigger it; from a known source
 * the owner is not subject to it (the per e-mail and address lockout still applies).
 */
import { z } from "zod";
import { sha256 } from "../crypto.ts";
import { ignoredRow, sql, type CommonQueryMethods } from "../db/pool.ts";
import type { DeviceIdentity } from "./loginChallenges.ts";

export const KNOWN_SOURCE_DAYS = 30;

/** Whether the account of `email` signed in from `address` lately, or `device` is one of its trusted devices. */
export async function isKnownSource(conn: CommonQueryMethods, email: string, address: string, device: DeviceIdentity | null): Promise<boolean> {
  const deviceHash = device?.deviceId ? sha256(device.deviceId) : null;
  return conn.oneFirst(sql.type(z.object({ known: z.boolean() }))`
    select exists (
      select 1 from users u join login_sources s on s.user_id = u.id
      where lower(u.email) = lower(${email}) and s.address = ${address}
        and s.last_success_at > now() - make_interval(days => ${KNOWN_SOURCE_DAYS})
    ) or (${deviceHash === null ? null : sql.binary(deviceHash)}::bytea is not null and exists (
      select 1 from users u join trusted_devices d on d.user_id = u.id
      where lower(u.email) = lower(${email}) and d.device_hash = ${deviceHash === null ? null : sql.binary(deviceHash)}::bytea
        and d.browser is not distinct from ${device?.browser ?? null}::text and d.expires_at > now()
    )) as known`);
}

/** Records a successful password check of `userId` from `address`. */
export async function recordLoginSource(conn: CommonQueryMethods, userId: number, address: string): Promise<void> {
  await conn.query(sql.type(ignoredRow)`
    insert into login_sources (user_id, address) values (${userId}, ${address.slice(0, 100)})
    on conflict (user_id, address) do update set last_success_at = now()`);
}
