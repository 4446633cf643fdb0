/**
 * Generator policy, the spec's rule read literally ("Authentication" 12): a generator can be
 * viewed by its owner or by a member of its team (its *viewers*); updated by a viewer holding
 * the `admin` role; deleted by its owner holding the `admin` role. `super_admin` holds every
 * permission ("all"), so it may view, update and delete any generator.
 *
 * Site admins (`admin`) also see every generator, as they see every project and team
 * (roles.ts: site admins see every resource). That sight is read-only, as it is for
 * projects: updating still needs a viewer, and running records a code generation in the
 * generator's project, which a plain site admin may not change either.
 *
 * Runs: a Draft generator runs only for its owner, a Published one for its viewers (and
 * super admins), an Archived one for nobody.
 */
import type { GeneratorRow } from "../../shared/generators/store.ts";
import type { UserRow } from "../../shared/db/users.ts";
import { hasRole, isSiteAdmin } from "./roles.ts";

type Generator = Pick<GeneratorRow, "user_id" | "team_role" | "status">;

const isOwner = (user: UserRow, g: Generator) => g.user_id === user.id;

/** The spec's viewers: the owner and the members (any role) of the generator's team. */
const isViewer = (user: UserRow, g: Generator) => isOwner(user, g) || g.team_role !== null;

/** Its viewers, and site admins (read only). */
export const canViewGenerator = (user: UserRow, g: Generator) => isViewer(user, g) || isSiteAdmin(user);

/** A viewer holding the `admin` (or `super_admin`) role; a super admin in any case. */
export const canUpdateGenerator = (user: UserRow, g: Generator) => (isViewer(user, g) && hasRole(user, "admin")) || hasRole(user, "super_admin");

/** Its owner holding the `admin` (or `super_admin`) role; a super admin in any case. */
export const canDeleteGenerator = (user: UserRow, g: Generator) => (isOwner(user, g) && hasRole(user, "admin")) || hasRole(user, "super_admin");

/** Draft: its owner; Published: its viewers and super admins; Archived: nobody. */
export const canRunGenerator = (user: UserRow, g: Generator) =>
  g.status !== "Archived" && (isOwner(user, g) || (g.status === "Published" && (isViewer(user, g) || hasRole(user, "super_admin"))));
