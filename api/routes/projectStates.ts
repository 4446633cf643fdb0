/**
 * The answers of a change its project's state refuses (shared/projects/writable.ts, checked by
 * api/policies/projectGuard.ts), for the responses of the routes that make such changes.
 */
import type { ResponseSpec } from "./route.ts";

export const projectLockedResponse = { 423: { description: "The project is locked (`project_locked`)" } } satisfies Record<number, ResponseSpec>;

export const projectArchivedResponse = { 409: { description: "The project is archived (`project_archived`)" } } satisfies Record<number, ResponseSpec>;

/** Locked 423, subscription expired 402, archived 409: every content change of a project. */
export const projectStateResponses = {
  402: { description: "The project's subscription has expired (`subscription_expired`)" },
  ...projectArchivedResponse,
  ...projectLockedResponse,
} satisfies Record<number, ResponseSpec>;
