/**
 * Personal API tokens: `<id>|<40 random characters>`, shown once. Only the SHA-256 of the
 * random part is stored; verification looks the row up by id and compares the hashes in
 * constant time, so a leaked database does not yield usable tokens. A token may carry an
 * expiry (at most TOKEN_MAX_LIFETIME_DAYS ahead when it is made); past it, the token no
 * longer authenticates, is listed as expired, and the cleanup deletes it a while later
 * (shared/auth/upkeep.ts).
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods } from "../db/pool.ts";

const tokenRow = z.object({
  id: z.number(),
  user_id: z.number(),
  name: z.string(),
  token_hash: z.instanceof(Buffer),
  abilities: z.array(z.string()),
  expires_at: z.date().nullable(),
  last_used_at: z.date().nullable(),
  created_at: z.date(),
});
export type PersonalTokenRow = z.infer<typeof tokenRow>;

/** The furthest ahead POST /api-tokens accepts an `expires_at`: a year, counted so that "a year from now" passes in a leap year too. */
export const TOKEN_MAX_LIFETIME_DAYS = 366;

const hash = (secret: string) => createHash("sha256").update(secret).digest();

/** Whether `token` has the shape of a personal token (as opposed to a JWT). */
export const looksLikePersonalToken = (token: string) => /^\d{1,18}\|[A-Za-z0-9]{40}$/.test(token);

/** Creates a token for `userId`; returns the row and the plain text, which is never stored. */
export async function createPersonalToken(
  conn: CommonQueryMethods,
  userId: number,
  name: string,
  options: { abilities?: string[]; expiresAt?: Date | null } = {},
): Promise<{ token: PersonalTokenRow; plainText: string }> {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  const bytes = randomBytes(40);
  const secret = Array.from(bytes, (b) => alphabet[b % alphabet.length]).join("");
  const token = await conn.one(sql.type(tokenRow)`
    insert into personal_access_tokens (user_id, name, token_hash, abilities, expires_at)
    values (${userId}, ${name}, ${sql.binary(hash(secret))}, ${sql.array(options.abilities ?? ["*"], "text")},
      ${options.expiresAt ? options.expiresAt.toISOString() : null})
    returning id, user_id, name, token_hash, abilities, expires_at, last_used_at, created_at`);
  return { token, plainText: `${token.id}|${secret}` };
}

/** Returns the token row when `plainText` is valid and unexpired, else null. */
export async function verifyPersonalToken(conn: CommonQueryMethods, plainText: string): Promise<PersonalTokenRow | null> {
  if (!looksLikePersonalToken(plainText)) return null;
  const [idText, secret] = plainText.split("|") as [string, string];
  const row = await conn.maybeOne(sql.type(tokenRow)`
    select id, user_id, name, token_hash, abilities, expires_at, last_used_at, created_at
    from personal_access_tokens where id = ${Number(idText)}`);
  if (!row) return null;
  const expected = hash(secret);
  if (row.token_hash.length !== expected.length || !timingSafeEqual(row.token_hash, expected)) return null;
  if (row.expires_at && row.expires_at.getTime() <= Date.now()) return null;
  return row;
}

/** Records use, at most once a minute per token to keep writes off the hot path. */
export async function touchPersonalToken(conn: CommonQueryMethods, row: PersonalTokenRow): Promise<void> {
  if (row.last_used_at && Date.now() - row.last_used_at.getTime() < 60_000) return;
  await conn.query(sql.type(ignoredRow)`update personal_access_tokens set last_used_at = now() where id = ${row.id}`);
}
