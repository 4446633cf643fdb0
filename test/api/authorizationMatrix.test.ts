/**
 * Every project and team route × {owner, team admin, member, viewer, stranger, site admin},
 * each with its expected status, from one table. Each cell runs in a fresh world (a
 * project owned by `owner`, shared with a team where the others hold their roles), so
 * destructive routes do not disturb the next cell.
 */
import t from "tap";
import type { DatabasePool } from "../../shared/db/pool.ts";
import { startTestApp } from "../support/app.ts";
import { buildProject, buildTeam, buildUserWithToken } from "../support/factories.ts";
import { request } from "../support/http.ts";

const actors = ["owner", "teamAdmin", "member", "viewer", "stranger", "siteAdmin"] as const;
type Actor = (typeof actors)[number];

interface World {
  project: number;
  otherProject: number;
  team: number;
  ids: Record<Actor, number>;
  tokens: Record<Actor, string>;
  newcomerEmail: string;
}

interface Row {
  name: string;
  method: string;
  path: (w: World) => string;
  body?: (w: World) => unknown;
  expect: Record<Actor, number>;
}

const manage = { owner: 200, teamAdmin: 200, member: 403, viewer: 403, stranger: 404, siteAdmin: 403 };
const view = { owner: 200, teamAdmin: 200, member: 200, viewer: 200, stranger: 404, siteAdmin: 200 };

const table: Row[] = [
  { name: "GET project", method: "GET", path: (w) => `/api/projects/${w.project}`, expect: view },
  { name: "PUT project", method: "PUT", path: (w) => `/api/projects/${w.project}`, body: () => ({ description: "changed" }), expect: manage },
  { name: "lock project", method: "POST", path: (w) => `/api/projects/${w.project}/lock`, expect: manage },
  { name: "unlock project", method: "POST", path: (w) => `/api/projects/${w.project}/unlock`, expect: manage },
  { name: "archive project", method: "POST", path: (w) => `/api/projects/${w.project}/archive`, expect: manage },
  { name: "unarchive project", method: "POST", path: (w) => `/api/projects/${w.project}/unarchive`, expect: manage },
  { name: "export project", method: "GET", path: (w) => `/api/projects/${w.project}/export`, expect: manage },
  {
    name: "DELETE project",
    method: "DELETE",
    path: (w) => `/api/projects/${w.project}`,
    expect: { owner: 200, teamAdmin: 403, member: 403, viewer: 403, stranger: 404, siteAdmin: 403 },
  },
  { name: "GET team", method: "GET", path: (w) => `/api/teams/${w.team}`, expect: view },
  { name: "PUT team", method: "PUT", path: (w) => `/api/teams/${w.team}`, body: () => ({ name: "Renamed" }), expect: manage },
  {
    name: "DELETE team",
    method: "DELETE",
    path: (w) => `/api/teams/${w.team}`,
    expect: { owner: 200, teamAdmin: 403, member: 403, viewer: 403, stranger: 404, siteAdmin: 403 },
  },
  { name: "GET members", method: "GET", path: (w) => `/api/teams/${w.team}/members`, expect: view },
  {
    name: "add member",
    method: "POST",
    path: (w) => `/api/teams/${w.team}/members`,
    body: (w) => ({ email: w.newcomerEmail, role_id: 3 }),
    expect: { ...manage, owner: 201, teamAdmin: 201 },
  },
  {
    name: "change viewer's role",
    method: "PUT",
    path: (w) => `/api/teams/${w.team}/members/${w.ids.viewer}`,
    body: () => ({ role_id: 3 }),
    expect: manage,
  },
  {
    name: "remove viewer (the viewer may leave)",
    method: "DELETE",
    path: (w) => `/api/teams/${w.team}/members/${w.ids.viewer}`,
    expect: { owner: 200, teamAdmin: 200, member: 403, viewer: 200, stranger: 404, siteAdmin: 403 },
  },
  {
    name: "share another project with the team",
    method: "POST",
    path: (w) => `/api/teams/${w.team}/projects`,
    body: (w) => ({ project_id: w.otherProject }),
    expect: { owner: 201, teamAdmin: 404, member: 403, viewer: 403, stranger: 404, siteAdmin: 403 },
  },
  { name: "unshare the project", method: "DELETE", path: (w) => `/api/teams/${w.team}/projects/${w.project}`, expect: manage },
];

async function buildWorld(pool: DatabasePool): Promise<World> {
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

t.test("authorization matrix", async (t) => {
  const app = await startTestApp(t);
  for (const row of table) {
    t.test(row.name, async (t) => {
      for (const actor of actors) {
        const world = await buildWorld(app.pool);
        if (row.name === "unlock project") await request(app.url, "POST", `/api/projects/${world.project}/lock`, { token: world.tokens.owner });
        if (row.name === "unarchive project") await request(app.url, "POST", `/api/projects/${world.project}/archive`, { token: world.tokens.owner });
        const res = await request(app.url, row.method, row.path(world), { token: world.tokens[actor], ...(row.body ? { body: row.body(world) } : {}) });
        t.equal(res.status, row.expect[actor], `${actor}: ${row.expect[actor]}${res.status === row.expect[actor] ? "" : ` (got ${res.status} ${res.text.slice(0, 120)})`}`);
        if (res.status === 403) t.equal(res.body.code, "forbidden");
        if (res.status === 404) t.equal(res.body.code, "not_found");
      }
    });
  }
});
