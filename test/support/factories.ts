/**
 * Factories: rows with sensible defaults, overridable, creating missing parents.
 */
import { randomBytes } from "node:crypto";
import { createPersonalToken } from "../../shared/auth/personalTokens.ts";
import type { DatabasePool } from "../../shared/db/pool.ts";
import { insertUser, type InsertUserInput, type UserRow } from "../../shared/db/users.ts";

let counter = 0;

/** Inserts a verified user with a unique name and e-mail. */
export async function buildUser(pool: DatabasePool, overrides: Partial<InsertUserInput> = {}): Promise<UserRow> {
  counter += 1;
  const tag = `${counter}${randomBytes(3).toString("hex")}`;
  return insertUser(pool, {
    name: `User ${tag}`,
    username: `user_${tag}`,
    email: `user_${tag}@example.test`,
    passwordHash: null,
    emailVerified: true,
    ...overrides,
  });
}

/** A personal API token for `user` (a real bearer token). */
export async function tokenFor(pool: DatabasePool, user: UserRow): Promise<string> {
  return (await createPersonalToken(pool, user.id, "test")).plainText;
}

/** A user and a bearer token for them. */
export async function buildUserWithToken(pool: DatabasePool, overrides: Partial<InsertUserInput> = {}) {
  const user = await buildUser(pool, overrides);
  return { user, token: await tokenFor(pool, user) };
}
