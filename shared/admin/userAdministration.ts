/**
 * What administrators do to accounts (PUT and DELETE /admin/users/{id}), with the rules that
 * keep the service administrable:
 * - only a `super_admin` grants or removes `admin`/`super_admin`, and only a `super_admin`
 *   changes, disables or deletes an account that holds either;
 * - the last active `super_admin` is never demoted, disabled or deleted (one advisory lock
 *   serialises such changes, so two concurrent demotions cannot both pass);
 * - nobody disables or deletes their own account here;
 * - disabling also ends every token issued so far, refresh tokens included, so enabling
 *   again does not revive them;
 * - an account left without the developer role (or `super_admin`) loses its personal API
 *   tokens: only that role may hold them, and granting it again does not revive them.
 * Each change writes an audit row in the same transaction.
 */
import { z } from "zod";
import { mayHoldPersonalTokens } from "../auth/personalTokens.ts";
import { AppError, conflict, forbidden, notFound } from "../errors.ts";
import { ignoredRow, sql, type DatabaseTransactionConnection } from "../db/pool.ts";
import { revokeOAuthGrantsOfAccount } from "../db/oauth.ts";
import { deletePersonalTokens, deleteUser, findUserById, type Role, type UserRow } from "../db/users.ts";
import { insertAuditEntry } from "./auditLog.ts";

const PRIVILEGED: readonly Role[] = ["admin", "super_admin"];

export interface UserAdminChanges {
  name?: string | undefined;
  email_verified?: boolean | undefined;
  /** The complete role list (`user` is always kept). */
  roles?: Role[] | undefined;
  /** A date disables the account, null enables it. */
  disabled_at?: Date | null | undefined;
}

/** The audited fields of an account. */
export function auditSnapshot(user: UserRow): Record<string, unknown> {
  return {
    name: user.name,
    email: user.email,
    email_verified: user.email_verified_at !== null,
    roles: [...user.roles].sort(),
    disabled_at: user.disabled_at?.toISOString() ?? null,
  };
}

const isSuper = (user: UserRow) => user.roles.includes("super_admin");
const isPrivileged = (roles: readonly string[]) => roles.some((r) => (PRIVILEGED as readonly string[]).includes(r));

async function lockTarget(tx: DatabaseTransactionConnection, id: number): Promise<UserRow> {
  await tx.query(sql.type(ignoredRow)`select 1 from users where id = ${id} for update`);
  const user = await findUserById(tx, id);
  if (!user) throw notFound("User");
  return user;
}

/** Serialises every change that could remove a super administrator (arbitrary, stable key). */
const SUPER_ADMIN_LOCK_KEY = 7_320_151_019;

/** 409 unless another active super administrator than `userId` remains (also before an account closes itself). */
export async function keepOneSuperAdmin(tx: DatabaseTransactionConnection, userId: number): Promise<void> {
  // One lock for all such changes: two concurrent demotions of the last two super
  // administrators would each see the other still there. The count runs after the lock,
  // so it sees what the first one committed.
  await tx.query(sql.type(ignoredRow)`select pg_advisory_xact_lock(${SUPER_ADMIN_LOCK_KEY})`);
  const others = await tx.oneFirst(sql.type(z.object({ n: z.number() }))`
    select count(*)::int as n from user_roles r join users u on u.id = r.user_id
    where r.role = 'super_admin' and u.disabled_at is null and r.user_id <> ${userId}`);
  if (others === 0) throw conflict("This is the last super administrator; make another one first.", "last_super_admin");
}

function checkPrivilege(actor: UserRow, target: UserRow, changes: UserAdminChanges): void {
  if (isSuper(actor)) return;
  if (isPrivileged(target.roles)) throw forbidden("Only a super administrator may change an administrator's account.");
  if (changes.roles && isPrivileged(changes.roles)) throw forbidden("Only a super administrator may grant the admin or super_admin role.");
}

/**
 * Applies `changes` to account `targetId` as `actor`.
 * @throws 404 unknown account, 403 a rule above, 409 `last_super_admin`
 */
export async function administerUser(tx: DatabaseTransactionConnection, actor: UserRow, targetId: number, changes: UserAdminChanges): Promise<UserRow> {
  const target = await lockTarget(tx, targetId);
  checkPrivilege(actor, target, changes);
  const disabling = changes.disabled_at instanceof Date && target.disabled_at === null;
  if (disabling && target.id === actor.id) throw forbidden("You cannot disable your own account.");
  const losesSuper = isSuper(target) && ((changes.roles && !changes.roles.includes("super_admin")) || disabling);
  if (losesSuper) await keepOneSuperAdmin(tx, target.id);

  const sets = [sql.fragment`updated_at = now()`];
  if (changes.name !== undefined) sets.push(sql.fragment`name = ${changes.name}`);
  if (changes.email_verified !== undefined) {
    sets.push(changes.email_verified ? sql.fragment`email_verified_at = coalesce(email_verified_at, now())` : sql.fragment`email_verified_at = null`);
  }
  if (changes.disabled_at !== undefined) {
    sets.push(changes.disabled_at === null ? sql.fragment`disabled_at = null` : sql.fragment`disabled_at = coalesce(disabled_at, now())`);
    if (disabling) sets.push(sql.fragment`tokens_revoked_at = now()`);
  }
  // Refresh tokens are refused while the account is disabled (findAccount), but would mint
  // fresh access tokens again once it is enabled: their grants end with the disable, and the
  // personal tokens it ends leave the token list.
  if (disabling) {
    await revokeOAuthGrantsOfAccount(tx, target.id);
    await deletePersonalTokens(tx, target.id);
  }
  await tx.query(sql.type(ignoredRow)`update users set ${sql.join(sets, sql.fragment`, `)} where id = ${target.id}`);
  if (changes.roles) {
    const roles = [...new Set<Role>(["user", ...changes.roles])];
    await tx.query(sql.type(ignoredRow)`delete from user_roles where user_id = ${target.id} and role <> all(${sql.array(roles, "text")}::text[])`);
    await tx.query(sql.type(ignoredRow)`
      insert into user_roles (user_id, role) select ${target.id}, unnest(${sql.array(roles, "text")}::text[]) on conflict do nothing`);
    if (!mayHoldPersonalTokens(roles)) await deletePersonalTokens(tx, target.id);
  }
  const updated = await findUserById(tx, target.id);
  if (!updated) throw new AppError(404, "not_found", "User not found.");
  const [before, after] = [auditSnapshot(target), auditSnapshot(updated)];
  const changed = Object.keys(after).filter((key) => JSON.stringify(before[key]) !== JSON.stringify(after[key]));
  if (changed.length > 0) {
    await insertAuditEntry(tx, {
      actorId: actor.id,
      action: "user.updated",
      subjectType: "user",
      subjectId: target.id,
      before: Object.fromEntries(changed.map((key) => [key, before[key]])),
      after: Object.fromEntries(changed.map((key) => [key, after[key]])),
    });
  }
  return updated;
}

/**
 * Deletes account `targetId` as `actor`.
 * @throws 404 unknown account, 403 own or (for an admin) privileged account, 409 `last_super_admin`
 */
export async function removeUser(tx: DatabaseTransactionConnection, actor: UserRow, targetId: number): Promise<void> {
  const target = await lockTarget(tx, targetId);
  if (target.id === actor.id) throw forbidden("You cannot delete your own account here; use DELETE /profile.");
  checkPrivilege(actor, target, {});
  if (isSuper(target)) await keepOneSuperAdmin(tx, target.id);
  await insertAuditEntry(tx, { actorId: actor.id, action: "user.deleted", subjectType: "user", subjectId: target.id, before: auditSnapshot(target), after: null });
  await deleteUser(tx, target.id);
}
