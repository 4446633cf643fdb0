/**
 * Personal API tokens: `<id>|<40 random characters>`, shown once. Only the SHA-256 of the
 * random part is stored; verification looks the row up by id and compares the hashes in
 * constant time, so a leaked database does not yield usable tokens. A token may carry an
 * expiry (at most TOKEN_MAX_LIFETIME_DAYS ahead when it is made); past it, the token no
 * longer authenticates, is listed as expired, and the cleanup deletes it a while later
 * (shared/auth/upkeep.ts).
 *
 * Holding them is tied to the developer role (spec: "`developer` (adds API key
 * management)"; `super_admin` holds every permission): an account that loses it loses its
 * tokens (shared/admin/userAdministration.ts).
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import { ignoredRow, sql, type CommonQueryMethods } from "../db/pool.ts";
import { userColumns, userRow, type UserRow } from "../db/users.ts";

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

/** Whether an account with `roles` may create and hold personal tokens: `developer`, or `super_admin`. */
export const mayHoldPersonalTokens = (roles: readonly string[]) => roles.includes("developer") || roles.includes("super_admin");

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

const hashMatches = (row: Pick<PersonalTokenRow, "token_hash">, secret: string) => {
  const expected = hash(secret);
  return row.token_hash.length === expected.length && timingSafeEqual(row.token_hash, expected);
};

const tokenWithUserRow = userRow.extend({
  token_id: z.number(),
  token_name: z.string(),
  token_hash: z.instanceof(Buffer),
  abilities: z.array(z.string()),
  expires_at: z.date().nullable(),
  last_used_at: z.date().nullable(),
  token_created_at: z.date(),
});

/**
 * The token row and its user when `plainText` is valid and unexpired, else null; one round
 * trip (bearer authentication: a second statement for the user was a third of a cached
 * read's database time). A named prepared statement: planning the join cost about as much
 * as running it.
 */
export async function verifyPersonalTokenWithUser(conn: CommonQueryMethods, plainText: string): Promise<{ token: PersonalTokenRow; user: UserRow } | null> {
  if (!looksLikePersonalToken(plainText)) return null;
  const [idText, secret] = plainText.split("|") as [string, string];
  const row = await conn.maybeOne(sql.prepared("authenticate_personal_token", tokenWithUserRow)`
    select t.id as token_id, t.name as token_name, t.token_hash, t.abilities, t.expires_at, t.last_used_at,
      t.created_at as token_created_at, ${userColumns}
    from personal_access_tokens t join users u on u.id = t.user_id where t.id = ${Number(idText)}`);
  if (!row || !hashMatches(row, secret)) return null;
  if (row.expires_at && row.expires_at.getTime() <= Date.now()) return null;
  const { token_id: id, token_name: name, token_hash, abilities, expires_at, last_used_at, token_created_at: createdAt, ...user } = row;
  return { token: { id, user_id: user.id, name, token_hash, abilities, expires_at, last_used_at, created_at: createdAt }, user };
}

/** Records use, at most once a minute per token to keep writes off the hot path. */
export async function touchPersonalToken(conn: CommonQueryMethods, row: PersonalTokenRow): Promise<void> {
  if (row.last_used_at && Date.now() - row.last_used_at.getTime() < 60_000) return;
  await conn.query(sql.type(ignoredRow)`update personal_access_tokens set last_used_at = now() where id = ${row.id}`);
}
