/**
 * Authorization matrices: every route × {owner, team admin, member, viewer, stranger, site
 * admin}, each with its expected status, from one table. Each cell runs in a fresh world (a
 * project owned by `owner`, shared with a team where the others hold their roles), so
 * destructive routes do not disturb the next cell.
 */
import type { Test } from "tap";
import type { DatabasePool } from "../../shared/db/pool.ts";
import { buildProject, buildTeam, buildUserWithToken } from "./factories.ts";
import { request } from "./http.ts";

export const actors = ["owner", "teamAdmin", "member", "viewer", "stranger", "siteAdmin"] as const;
export type Actor = (typeof actors)[number];

export interface World {
  project: number;
  otherProject: number;
  team: number;
  ids: Record<Actor, number>;
  tokens: Record<Actor, string>;
  newcomerEmail: string;
}

export interface MatrixRow<W extends World = World> {
  name: string;
  method: string;
  path: (w: W) => string;
  body?: (w: W) => unknown;
  /** Runs before the request, as the owner would (e.g. lock the project for an unlock row). */
  before?: (w: W, baseUrl: string) => Promise<void>;
  expect: Record<Actor, number>;
}

/** Owner and team admins manage the project. */
export const manage = { owner: 200, teamAdmin: 200, member: 403, viewer: 403, stranger: 404, siteAdmin: 403 };
/** Everyone who sees the project reads it; strangers do not see it. */
export const view = { owner: 200, teamAdmin: 200, member: 200, viewer: 200, stranger: 404, siteAdmin: 200 };
/** Owner, team admins and members change what is inside the project; viewers only read. */
export const content = { owner: 200, teamAdmin: 200, member: 200, viewer: 403, stranger: 404, siteAdmin: 403 };

/** A world: users for every actor, a project shared through a team, another project of the owner. */
export async function buildWorld(pool: DatabasePool): Promise<World> {
  const entries = await Promise.all(actors.map(async (a) => [a, await buildUserWithToken(pool, a === "siteAdmin" ? { roles: ["admin"] } : {})] as const));
  const users = Object.fromEntries(entries) as Record<Actor, Awaited<ReturnType<typeof buildUserWithToken>>>;
  const project = await buildProject(pool, users.owner.user.id);
  const otherProject = await buildProject(pool, users.owner.user.id);
  const team = await buildTeam(pool, users.owner.user.id, { [users.teamAdmin.user.id]: 2, [users.member.user.id]: 3, [users.viewer.user.id]: 4 }, [project]);
  return {
    project,
    otherProject,
    team,
    ids: Object.fromEntries(actors.map((a) => [a, users[a].user.id])) as Record<Actor, number>,
    tokens: Object.fromEntries(actors.map((a) => [a, users[a].token])) as Record<Actor, string>,
    newcomerEmail: (await buildUserWithToken(pool)).user.email,
  };
}

/** Runs every row for every actor, each cell in a world made by `makeWorld`. */
export async function runMatrix<W extends World>(t: Test, baseUrl: string, rows: MatrixRow<W>[], makeWorld: () => Promise<W>): Promise<void> {
  for (const row of rows) {
    await t.test(row.name, async (t) => {
      for (const actor of actors) {
        const world = await makeWorld();
        await row.before?.(world, baseUrl);
        const res = await request(baseUrl, row.method, row.path(world), { token: world.tokens[actor], ...(row.body ? { body: row.body(world) } : {}) });
        const expected = row.expect[actor];
        t.equal(res.status, expected, `${actor}: ${expected}${res.status === expected ? "" : ` (got ${res.status} ${res.text.slice(0, 160)})`}`);
        if (res.status === 403) t.equal(res.body.code, "forbidden");
        if (res.status === 404) t.equal(res.body.code, "not_found");
      }
    });
  }
}
