/**
 * Factories: rows with sensible defaults, overridable, creating missing parents.
 */
import { randomBytes } from "node:crypto";
import { createPersonalToken } from "../../shared/auth/personalTokens.ts";
import { z } from "zod";
import { sql, type DatabasePool } from "../../shared/db/pool.ts";
import { createProject } from "../../shared/projects/createProject.ts";
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

/** A project owned by `ownerId`, with its default subscription. */
export async function buildProject(pool: DatabasePool, ownerId: number, overrides: { name?: string; isPublic?: boolean } = {}): Promise<number> {
  counter += 1;
  return pool.transaction((tx) =>
    createProject(tx, { ownerId, name: overrides.name ?? `Project ${counter}`, ...(overrides.isPublic !== undefined ? { isPublic: overrides.isPublic } : {}) }),
  );
}

/** A team owned by `ownerId`, with `members` (user id → role id) and the given projects attached. */
export async function buildTeam(pool: DatabasePool, ownerId: number, members: Record<number, number> = {}, projectIds: number[] = []): Promise<number> {
  return pool.transaction(async (tx) => {
    const id = await tx.oneFirst(sql.type(z.object({ id: z.number() }))`
      insert into teams (owner_id, name) values (${ownerId}, ${`Team ${(counter += 1)}`}) returning id`);
    await tx.query(sql.type(z.object({}))`insert into team_members (team_id, user_id, role_id) values (${id}, ${ownerId}, 1)`);
    for (const [userId, roleId] of Object.entries(members)) {
      await tx.query(sql.type(z.object({}))`insert into team_members (team_id, user_id, role_id) values (${id}, ${Number(userId)}, ${roleId})`);
    }
    for (const projectId of projectIds) await tx.query(sql.type(z.object({}))`insert into team_projects (team_id, project_id) values (${id}, ${projectId})`);
    return id;
  });
}

/** Makes `userId` a patron of `level` for `days` from now (a membership period, as a purchase would record). */
export async function makePatron(pool: DatabasePool, userId: number, options: { level?: number; days?: number } = {}): Promise<void> {
  await pool.query(sql.type(z.object({}))`
    insert into patron_memberships (user_id, level, started_at, expires_at)
    values (${userId}, ${options.level ?? 1}, now(), now() + make_interval(days => ${options.days ?? 30}))`);
}

/** The states a project refuses changes in (shared/projects/writable.ts), and the normal one. */
export type ProjectStateName = "normal" | "locked" | "expired" | "archived";

/** What a change to a project in each refusing state is answered with (shared/projects/writable.ts). */
export const projectStateRefusals = [
  { state: "locked", status: 423, code: "project_locked" },
  { state: "expired", status: 402, code: "subscription_expired" },
  { state: "archived", status: 409, code: "project_archived" },
] as const;

/** The refusals of the states other than expired (routes that stay open when the subscription has run out). */
export const lockedOrArchivedRefusals = projectStateRefusals.filter((r) => r.state !== "expired");

/**
 * Puts project `projectId` into `state` alone, clearing the other two: unlocked and not
 * archived, and its latest subscription (the one the guard reads, by `started_at desc, id
 * desc`) run out a day ago for "expired", else live (left as it is when it was).
 */
export async function setProjectState(pool: DatabasePool, projectId: number, state: ProjectStateName): Promise<void> {
  await pool.transaction(async (tx) => {
    await tx.query(sql.type(z.object({}))`
      update projects set is_locked = ${state === "locked"}, archived_at = ${state === "archived" ? sql.fragment`now()` : null} where id = ${projectId}`);
    const latest = sql.fragment`(select id from subscriptions where project_id = ${projectId} order by started_at desc, id desc limit 1)`;
    await tx.query(sql.type(z.object({}))`
      ${
        state === "expired"
          ? sql.fragment`update subscriptions set expires_at = now() - interval '1 day' where id = ${latest}`
          : sql.fragment`update subscriptions set expires_at = greatest(expires_at, now() + interval '30 days'), expired_at = null where id = ${latest} and (expired_at is not null or expires_at <= now())`
      }`);
  });
}
