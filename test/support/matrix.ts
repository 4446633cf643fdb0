/**
 * Authorization matrices: every route × {owner, team admin, member, viewer, stranger, site
 * admin}, each with its expected status, from one table. Each cell runs in a world made for
 * it (a project owned by `owner`, shared with a team where the others hold their roles), so
 * destructive routes do not disturb the next cell. The users of a file are made once and
 * shared by its worlds (no row changes a user; each world has its own project and team), so
 * a cell costs a few inserts.
 *
 * Two more actors run for the rows that give them a status (the presets below all do):
 * `superAdmin`, a user holding the `super_admin` site role, and `publicVisitor`, the stranger
 * in a world whose project the owner made public first (`is_public` only lists a project in
 * the gallery, so they should see no more than a stranger).
 */
import type { Test } from "tap";
import type { DatabasePool } from "../../shared/db/pool.ts";
import { buildProject, buildTeam, buildUserWithToken } from "./factories.ts";
import { changedTables, fingerprinter } from "./fuzz/fingerprint.ts";
import { request, type ApiResponse } from "./http.ts";

export const actors = ["owner", "teamAdmin", "member", "viewer", "stranger", "siteAdmin"] as const;
export type Actor = (typeof actors)[number];

/** Actors a row may add: run only where the row's `expect` names them. */
export const extraActors = ["superAdmin", "publicVisitor"] as const;
export type ExtraActor = (typeof extraActors)[number];
export type AnyActor = Actor | ExtraActor;

/** The users of a world (the public visitor is the stranger). */
export type WorldUser = Actor | "superAdmin";

/** Expected status per actor: the six always, the extra actors when given. */
export type Expectation = Record<Actor, number> & Partial<Record<ExtraActor, number>>;

export interface World {
  project: number;
  otherProject: number;
  team: number;
  ids: Record<WorldUser, number>;
  tokens: Record<WorldUser, string>;
  newcomerEmail: string;
}

export interface MatrixRow<W extends World = World> {
  name: string;
  method: string;
  path: (w: W) => string;
  body?: (w: W) => unknown;
  /** Runs before the request, as the owner would (e.g. lock the project for an unlock row). */
  before?: (w: W, baseUrl: string) => Promise<void>;
  expect: Expectation;
  /** A POST or PUT that only reads (validation, comparison): with `effects`, its allowed cells need not write. */
  writesNothing?: boolean;
  /** With `effects`: the tables an allowed cell must change (by default, any one will do). */
  writes?: string[];
  /** More assertions on the response (e.g. whether a list holds the project), run when the status matched. */
  check?: (t: Test, res: ApiResponse, w: W, actor: AnyActor) => void;
}

/** Owner and team admins manage the project. */
export const manage: Expectation = { owner: 200, teamAdmin: 200, member: 403, viewer: 403, stranger: 404, siteAdmin: 403, superAdmin: 200, publicVisitor: 404 };
/** Everyone who sees the project reads it; strangers do not see it, public or not. */
export const view: Expectation = { owner: 200, teamAdmin: 200, member: 200, viewer: 200, stranger: 404, siteAdmin: 200, superAdmin: 200, publicVisitor: 404 };
/** Owner, team admins and members change what is inside the project; viewers only read. */
export const content: Expectation = { owner: 200, teamAdmin: 200, member: 200, viewer: 403, stranger: 404, siteAdmin: 403, superAdmin: 200, publicVisitor: 404 };

/** The users of worlds: one for every actor (with a token), and a newcomer to invite. */
export type WorldUsers = Pick<World, "ids" | "tokens" | "newcomerEmail">;

/**
 * Users for every actor. With `everyoneAdmin`, every actor also holds the `admin` site role
 * (the super admin keeps `super_admin`).
 */
export async function buildUsers(pool: DatabasePool, options: { everyoneAdmin?: boolean } = {}): Promise<WorldUsers> {
  const names: WorldUser[] = [...actors, "superAdmin"];
  const roleOf = (a: WorldUser) =>
    a === "superAdmin" ? { roles: ["super_admin" as const] } : a === "siteAdmin" || options.everyoneAdmin ? { roles: ["admin" as const] } : {};
  const entries = await Promise.all(names.map(async (a) => [a, await buildUserWithToken(pool, roleOf(a))] as const));
  const users = Object.fromEntries(entries) as Record<WorldUser, Awaited<ReturnType<typeof buildUserWithToken>>>;
  return {
    ids: Object.fromEntries(names.map((a) => [a, users[a].user.id])) as Record<WorldUser, number>,
    tokens: Object.fromEntries(names.map((a) => [a, users[a].token])) as Record<WorldUser, string>,
    newcomerEmail: (await buildUserWithToken(pool)).user.email,
  };
}

/**
 * A world: a project shared through a team, another project of the owner, for `users` (made
 * here when not given).
 */
export async function buildWorld(pool: DatabasePool, users?: WorldUsers): Promise<World> {
  const people = users ?? (await buildUsers(pool));
  const { ids } = people;
  const project = await buildProject(pool, ids.owner);
  const otherProject = await buildProject(pool, ids.owner);
  const team = await buildTeam(pool, ids.owner, { [ids.teamAdmin]: 2, [ids.member]: 3, [ids.viewer]: 4 }, [project]);
  return { project, otherProject, team, ...people };
}

/**
 * Runs every row for every actor it names, each cell in a world made by `makeWorld`. With
 * `pool` (an app without a background worker, so nothing else writes meanwhile), every
 * refused cell (an expected status of 400 or more) also shows that it wrote nothing: the
 * fingerprint (rows and newest xmin per table) of `options.tables` is the same before and
 * after. Those are the tables the file's routes write (one scan each, where every table of
 * the database cost a hundred); with `options.effects` each allowed write cell shows that its
 * write lands in them, so a refused cell whose guard were gone would change them too.
 * `options.settle` waits for background work (a worker's jobs) to end before each fingerprint;
 * with `options.effects`, every allowed cell of a method other than GET must change the
 * fingerprint (it wrote what it answered it did), unless its row `writesNothing`, and change
 * each table its row `writes` names.
 */
export async function runMatrix<W extends World>(
  t: Test,
  baseUrl: string,
  rows: MatrixRow<W>[],
  makeWorld: (actor: AnyActor) => Promise<W>,
  pool?: DatabasePool,
  options: { settle?: () => Promise<void>; effects?: boolean; tables?: readonly string[] } = {},
): Promise<void> {
  const fingerprint = pool ? await fingerprinter(pool, options.tables) : undefined;
  for (const row of rows) {
    await t.test(row.name, async (t) => {
      const cast: AnyActor[] = [...actors, ...extraActors.filter((a) => row.expect[a] !== undefined)];
      for (const actor of cast) {
        const world = await makeWorld(actor);
        if (actor === "publicVisitor") {
          const made = await request(baseUrl, "PUT", `/api/projects/${world.project}`, { token: world.tokens.owner, body: { is_public: true } });
          t.equal(made.status, 200, "the owner made the project public");
        }
        await row.before?.(world, baseUrl);
        const token = actor === "publicVisitor" ? world.tokens.stranger : world.tokens[actor];
        const expected = row.expect[actor]!;
        const mustWrite = options.effects === true && expected < 400 && row.method !== "GET" && !row.writesNothing;
        await options.settle?.();
        const before = fingerprint && (expected >= 400 || mustWrite) ? await fingerprint() : undefined;
        const res = await request(baseUrl, row.method, row.path(world), { token, ...(row.body ? { body: row.body(world) } : {}) });
        if (before && fingerprint && expected >= 400) {
          await options.settle?.();
          t.same(changedTables(before, await fingerprint()), [], `${actor}: the refused request wrote nothing`);
        }
        if (before && fingerprint && mustWrite && res.status === expected) {
          await options.settle?.();
          const changed = changedTables(before, await fingerprint());
          t.not(changed.length, 0, `${actor}: the allowed request wrote its change`);
          for (const table of row.writes ?? []) t.ok(changed.includes(table), `${actor}: ${table} changed (changed: ${changed.join(", ")})`);
        }
        t.equal(res.status, expected, `${actor}: ${expected}${res.status === expected ? "" : ` (got ${res.status} ${res.text.slice(0, 160)})`}`);
        if (res.status === 403) t.equal(res.body.code, "forbidden");
        if (res.status === 404) t.equal(res.body.code, "not_found");
        if (res.status === 404 && (actor === "stranger" || actor === "publicVisitor")) {
          // A foreign id must answer exactly as an id that does not exist, or a stranger learns which ids are taken.
          const missingPath = row.path(world).replace(/\/\d+(?=\/|\?|$)/g, "/999999999");
          const missing = await request(baseUrl, row.method, missingPath, { token, ...(row.body ? { body: row.body(world) } : {}) });
          t.same({ status: missing.status, body: missing.body }, { status: 404, body: res.body }, `${actor}: the same 404 as for ${missingPath}`);
        }
        if (res.status === expected) row.check?.(t, res, world, actor);
      }
    });
  }
}
