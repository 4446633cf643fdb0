/**
 * Queries on users and their roles.
 */
import { z } from "zod";
import { conflict } from "../errors.ts";
import { sql, type CommonQueryMethods } from "./pool.ts";

export const roles = ["user", "developer", "admin", "super_admin"] as const;
export type Role = (typeof roles)[number];

export const userRow = z.object({
  id: z.number(),
  name: z.string(),
  username: z.string(),
  email: z.string(),
  language: z.string(),
  theme: z.string(),
  email_verified_at: z.date().nullable(),
  is_seller: z.boolean(),
  kanban_initials: z.string().nullable(),
  kanban_color: z.string().nullable(),
  tokens_revoked_at: z.date().nullable(),
  /** Set by an administrator: the account may not sign in and its tokens are refused. */
  disabled_at: z.date().nullable(),
  created_at: z.date(),
  roles: z.array(z.enum(roles)),
});
export type UserRow = z.infer<typeof userRow>;

/** Column list of `userRow` for a query over `users u`. */
export const userColumns = sql.fragment`u.id, u.name, u.username, u.email, u.language, u.theme, u.email_verified_at,
  u.is_seller, u.kanban_initials, u.kanban_color, u.tokens_revoked_at, u.disabled_at, u.created_at,
  coalesce((select array_agg(r.role order by r.role) from user_roles r where r.user_id = u.id), '{}') as roles`;

export async function findUserById(conn: CommonQueryMethods, id: number): Promise<UserRow | null> {
  return conn.maybeOne(sql.type(userRow)`select ${userColumns} from users u where u.id = ${id}`);
}

export interface InsertUserInput {
  name: string;
  username: string;
  email: string;
  passwordHash: string | null;
  language?: string;
  roles?: Role[];
  emailVerified?: boolean;
}

/** Inserts a user with its roles (at least `user`). */
export async function insertUser(conn: CommonQueryMethods, input: InsertUserInput): Promise<UserRow> {
  const id = await conn.oneFirst(sql.type(z.object({ id: z.number() }))`
    insert into users (name, username, email, password_hash, language, email_verified_at)
    values (${input.name}, ${input.username}, ${input.email}, ${input.passwordHash}, ${input.language ?? "en"},
      ${input.emailVerified ? sql.fragment`now()` : null})
    returning id`);
  const granted = [...new Set<Role>(["user", ...(input.roles ?? [])])];
  await conn.query(sql.type(z.object({}))`
    insert into user_roles (user_id, role) select ${id}, unnest(${sql.array(granted, "text")}::text[])`);
  const user = await findUserById(conn, id);
  if (!user) throw new Error("inserted user vanished");
  return user;
}

/** Whether an e-mail address is in use (case-insensitively), optionally by someone other than `exceptId`. */
export async function emailTaken(conn: CommonQueryMethods, email: string, exceptId?: number): Promise<boolean> {
  return conn.exists(sql.type(z.object({}))`
    select 1 from users where lower(email) = lower(${email}) and id <> ${exceptId ?? 0}`);
}

export async function usernameTaken(conn: CommonQueryMethods, username: string, exceptId?: number): Promise<boolean> {
  return conn.exists(sql.type(z.object({}))`
    select 1 from users where lower(username) = lower(${username}) and id <> ${exceptId ?? 0}`);
}

/** A free username derived from `base` (the e-mail's local part in the short registration form). */
export async function freeUsername(conn: CommonQueryMethods, base: string): Promise<string> {
  let stem = base.replace(/[^A-Za-z0-9_.-]/g, "").slice(0, 48);
  if (stem.length < 2) stem = `user${stem}`;
  for (let n = 0; n < 50; n += 1) {
    const candidate = n === 0 ? stem : `${stem}${n + Math.floor(Math.random() * 1000)}`;
    if (!(await usernameTaken(conn, candidate))) return candidate;
  }
  return `${stem}${Date.now()}`;
}

/**
 * Sets a new password and ends every token issued before now (call in a transaction). The
 * row is locked first and the time read after that (`clock_timestamp()`, not the
 * transaction's start): a login that checked the old password re-reads the row after minting
 * its token (`passwordStillCurrent`), so either it waits for this change and is refused, or
 * its token was minted before this time and is revoked by it.
 */
export async function setPassword(conn: CommonQueryMethods, userId: number, passwordHash: string): Promise<void> {
  await conn.query(sql.type(z.object({}))`select 1 from users where id = ${userId} for update`);
  await conn.query(sql.type(z.object({}))`
    update users set password_hash = ${passwordHash}, password_changed_at = clock_timestamp(), tokens_revoked_at = clock_timestamp(), updated_at = now()
    where id = ${userId}`);
  await deletePersonalTokens(conn, userId);
}

/** Ends every access token issued before now (logout-all-devices). */
export async function revokeAllTokens(conn: CommonQueryMethods, userId: number): Promise<void> {
  await conn.query(sql.type(z.object({}))`update users set tokens_revoked_at = now(), updated_at = now() where id = ${userId}`);
  await deletePersonalTokens(conn, userId);
}

/**
 * Deletes the personal API tokens of a user whose every token was just revoked: the revocation
 * time refuses them anyway, and GET /api-tokens would otherwise list them as working.
 */
export async function deletePersonalTokens(conn: CommonQueryMethods, userId: number): Promise<void> {
  await conn.query(sql.type(z.object({}))`delete from personal_access_tokens where user_id = ${userId}`);
}

export async function markEmailVerified(conn: CommonQueryMethods, userId: number): Promise<void> {
  await conn.query(sql.type(z.object({}))`
    update users set email_verified_at = coalesce(email_verified_at, now()), updated_at = now() where id = ${userId}`);
}

export interface ProfileChanges {
  name?: string;
  email?: string;
  username?: string;
  language?: string;
  theme?: string;
  kanban_initials?: string | null;
  kanban_color?: string | null;
}

/** Applies profile changes; a changed e-mail address must be verified again. */
export async function updateProfile(conn: CommonQueryMethods, userId: number, changes: ProfileChanges): Promise<UserRow> {
  const sets = Object.entries(changes)
    .filter(([, value]) => value !== undefined)
    .map(([column, value]) => sql.fragment`${sql.identifier([column])} = ${value as string | null}`);
  if (changes.email !== undefined) {
    sets.push(sql.fragment`email_verified_at = case when lower(email) = lower(${changes.email}) then email_verified_at else null end`);
  }
  sets.push(sql.fragment`updated_at = now()`);
  await conn.query(sql.type(z.object({}))`update users set ${sql.join(sets, sql.fragment`, `)} where id = ${userId}`);
  const user = await findUserById(conn, userId);
  if (!user) throw new Error(`user ${userId} vanished`);
  return user;
}

/** Why an account cannot go, by the table whose RESTRICT key holds it: records kept for someone else. */
const keptBy: Record<string, string> = {
  invoices: "it has invoices, which are kept for accounting",
  credit_notes: "it has credit notes, which are kept for accounting",
};

/**
 * Deletes an account and, by cascade, what was only its own.
 * @throws 409 `account_has_records` when records kept for others refer to it (its invoices);
 * the statement deletes nothing then. (A seller's bought templates are withdrawn, 0122.)
 */
export async function deleteUser(conn: CommonQueryMethods, userId: number): Promise<void> {
  try {
    await conn.query(sql.type(z.object({}))`delete from users where id = ${userId}`);
  } catch (error) {
    const { code, table } = error as { code?: unknown; table?: unknown };
    if (code !== "23001") throw error; // restrict_violation
    const reason = keptBy[String(table)] ?? "other records that must be kept refer to it";
    throw conflict(`This account cannot be deleted: ${reason}. An administrator can disable it instead.`, "account_has_records");
  }
}
