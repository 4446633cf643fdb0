/**
 * What a token may do (spec "Authentication" 7: scopes `read`, `write`, `admin`; the
 * client asks for `*`). OAuth access tokens carry them in their `scope` claim; personal API
 * tokens carry the same names as `abilities`.
 *
 * Glossary:
 * - *requested*: the names a client asked for; `*` means every scope the user may hold.
 * - *allowed*: the scopes the user's roles permit: `read` and `write` for everyone, plus
 *   `admin` for administrators (`admin`, `super_admin`).
 * - *effective*: what a presented token may do now: its scopes (with `*` expanded) that the
 *   user's roles still allow, so a user who lost the admin role loses the admin scope of
 *   every token at once.
 *
 * Rules: safe requests (GET, HEAD, OPTIONS) need `read`, which `write` includes (a token
 * that may change things may also look at them); every other request needs `write`; routes
 * of site administrators also need `admin`. Without `admin`, a token acts as if its user
 * held no administrator role, so every role check in the policies follows the token too.
 */
import type { Role } from "../db/users.ts";

export const SCOPES = ["read", "write", "admin"] as const;
export type Scope = (typeof SCOPES)[number];

/** The values POST /api-tokens accepts as `abilities`. */
export const ABILITIES = ["*", ...SCOPES] as const;

/** Roles that only act with the `admin` scope. */
const ADMIN_ROLES: readonly Role[] = ["admin", "super_admin"];
const isAdminRole = (role: string) => (ADMIN_ROLES as readonly string[]).includes(role);

/** The scopes `roles` permit. */
export function allowedScopes(roles: readonly string[]): Scope[] {
  return roles.some(isAdminRole) ? [...SCOPES] : ["read", "write"];
}

/** Space-separated scopes for a token claim (`read write admin`). */
export const scopeString = (scopes: readonly Scope[]) => SCOPES.filter((s) => scopes.includes(s)).join(" ");

/** A token's effective scopes: `names` (a claim split on spaces, or abilities) with `*` expanded, limited to what `roles` allow. */
export function effectiveScopes(names: readonly string[], roles: readonly string[]): Scope[] {
  const allowed = allowedScopes(roles);
  if (names.includes("*")) return allowed;
  return allowed.filter((scope) => names.includes(scope));
}

/** Whether `held` satisfies `needed` (`write` includes `read`). */
export function hasScope(held: readonly Scope[], needed: Scope): boolean {
  return held.includes(needed) || (needed === "read" && held.includes("write"));
}

/** The roles a token with `scopes` acts with: administrator roles need the `admin` scope. */
export function rolesInEffect<R extends string>(roles: readonly R[], scopes: readonly Scope[]): R[] {
  return scopes.includes("admin") ? [...roles] : roles.filter((role) => !isAdminRole(role));
}

/**
 * The scopes a caller lacks to put `requested` abilities on a new token: each one must be
 * within the caller's own scopes, and `*` (which follows the user's roles) needs every scope
 * the user's roles allow, so a restricted token cannot mint a broader one.
 */
export function scopesMissingToGrant(requested: readonly string[], callerScopes: readonly Scope[], heldRoles: readonly string[]): Scope[] {
  const needed = new Set<Scope>();
  for (const name of requested) {
    for (const scope of name === "*" ? allowedScopes(heldRoles) : [name as Scope]) needed.add(scope);
  }
  return SCOPES.filter((scope) => needed.has(scope) && !hasScope(callerScopes, scope));
}
