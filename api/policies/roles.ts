/**
 * Role checks shared by the resource policies. `super_admin` holds every permission of
 * `admin`; `admin` and `super_admin` may see every resource.
 */
import type { Role, UserRow } from "../../shared/db/users.ts";

export const hasRole = (user: UserRow, role: Role) => user.roles.includes(role) || (role !== "super_admin" && user.roles.includes("super_admin"));

/** Site administrators see everything. */
export const isSiteAdmin = (user: UserRow) => hasRole(user, "admin");
