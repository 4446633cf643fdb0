/**
 * Generator policy (spec "Authentication" 12): a generator can be viewed by its owner or by
 * a member of its team; updated by a viewer holding the `admin` role; deleted by its owner
 * holding the `admin` role. Our reading (docs/decisions.md): "the admin role" is the admin
 * role over the generator — its owner, an owner or admin of its team, or a site admin — so
 * owners keep full control of what they made, team admins may edit, and deletion stays
 * with the owner (and super admins). Site admins see every generator, as every project.
 * Only a Published generator runs for anyone but its owner; an Archived one runs for nobody.
 */
import type { GeneratorRow } from "../../shared/generators/store.ts";
import type { UserRow } from "../../shared/db/users.ts";
import { hasRole, isSiteAdmin } from "./roles.ts";

type Generator = Pick<GeneratorRow, "user_id" | "team_role" | "status">;

const isOwner = (user: UserRow, g: Generator) => g.user_id === user.id;

export const canViewGenerator = (user: UserRow, g: Generator) => isOwner(user, g) || g.team_role !== null || isSiteAdmin(user);

export const canUpdateGenerator = (user: UserRow, g: Generator) =>
  canViewGenerator(user, g) && (isOwner(user, g) || g.team_role === "owner" || g.team_role === "admin" || hasRole(user, "admin"));

export const canDeleteGenerator = (user: UserRow, g: Generator) => isOwner(user, g) || hasRole(user, "super_admin");

export const canRunGenerator = (user: UserRow, g: Generator) =>
  canViewGenerator(user, g) && g.status !== "Archived" && (g.status === "Published" || isOwner(user, g));
