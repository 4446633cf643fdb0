/**
 * Every project and team route × {owner, team admin, member, viewer, stranger, site admin,
 * super admin, public visitor}, each with its expected status, from one table. Each cell runs
 * in a fresh world (a project owned by `owner`, shared with a team where the others hold
 * their roles; for the public visitor, the owner made it public first; the users are the
 * file's, made once), so destructive routes do not disturb the next cell. A refused cell
 * writes nothing to the project and team tables, and an allowed write changes them. List routes also check whether the list holds the
 * world's project or team, as the actor's rights say.
 */
import t from "tap";
import type { Test } from "tap";
import { startTestApp } from "../support/app.ts";
import { request, type ApiResponse } from "../support/http.ts";
import { buildUsers, buildWorld, manage, runMatrix, view, type AnyActor, type Expectation, type MatrixRow, type World, type WorldUser } from "../support/matrix.ts";

/** The same status for every actor. */
const everyone = (status: number): Expectation => ({
  owner: status,
  teamAdmin: status,
  member: status,
  viewer: status,
  stranger: status,
  siteAdmin: status,
  superAdmin: status,
  publicVisitor: status,
});
/** The user behind an actor (the public visitor is the stranger of a public-project world). */
const userOf = (actor: AnyActor): WorldUser => (actor === "publicVisitor" ? "stranger" : actor);
/** Actors the world's project (and team) is shared with. */
const insiders: AnyActor[] = ["owner", "teamAdmin", "member", "viewer"];
const ids = (res: ApiResponse) => (res.body.data as { id: number }[]).map((x) => x.id);
/** Checks that a list holds `id` exactly for the actors in `holders`. */
const listed =
  (id: (w: World) => number, holders: AnyActor[], what: string) =>
  (t: Test, res: ApiResponse, w: World, actor: AnyActor) =>
    t.equal(ids(res).includes(id(w)), holders.includes(actor), `${actor}: ${holders.includes(actor) ? "lists" : "does not list"} ${what}`);

const joinCode = (w: World) => `join-code-${w.project}`;
const bundle = { format: "schemaforge-project", version: 1, project: { name: "Imported" }, sections: {} };

const lockFirst = async (w: { project: number; tokens: { owner: string } }, url: string) => {
  await request(url, "POST", `/api/projects/${w.project}/lock`, { token: w.tokens.owner });
};
const archiveFirst = async (w: { project: number; tokens: { owner: string } }, url: string) => {
  await request(url, "POST", `/api/projects/${w.project}/archive`, { token: w.tokens.owner });
};

/** What the project and team routes write (allowed cells show that their writes land here). */
const tables = ["projects", "subscriptions", "teams", "team_members", "team_projects", "team_invitations", "audit_log", "outbox_events", "jobs"];

const table: MatrixRow[] = [
  {
    name: "list own projects",
    method: "GET",
    path: () => "/api/projects",
    expect: everyone(200),
    check: listed((w) => w.project, insiders, "the project"),
  },
  {
    name: "public gallery (lists the project only once it is public)",
    method: "GET",
    path: () => "/api/projects?public=true",
    expect: everyone(200),
    check: (t, res, w, actor) => {
      listed((w) => w.project, ["publicVisitor"], "the project")(t, res, w, actor);
      const entry = (res.body.data as { id: number; access: unknown; join_code: unknown }[]).find((p) => p.id === w.project);
      if (entry) t.match(entry, { access: null, join_code: null }, "a visitor sees the gallery's fields, not the join code");
    },
  },
  {
    name: "create project",
    method: "POST",
    path: () => "/api/projects",
    body: () => ({ name: "Mine" }),
    expect: everyone(201),
    check: (t, res, w, actor) => t.match(res.body.project, { owner_id: w.ids[userOf(actor)], access: "owner" }),
  },
  { name: "GET project", method: "GET", path: (w) => `/api/projects/${w.project}`, expect: view },
  { name: "PUT project", method: "PUT", path: (w) => `/api/projects/${w.project}`, body: () => ({ description: "changed" }), expect: manage },
  { name: "lock project", method: "POST", path: (w) => `/api/projects/${w.project}/lock`, expect: manage },
  { name: "unlock project", method: "POST", path: (w) => `/api/projects/${w.project}/unlock`, before: lockFirst, expect: manage },
  { name: "archive project", method: "POST", path: (w) => `/api/projects/${w.project}/archive`, expect: manage },
  { name: "unarchive project", method: "POST", path: (w) => `/api/projects/${w.project}/unarchive`, before: archiveFirst, expect: manage },
  { name: "export project", method: "GET", path: (w) => `/api/projects/${w.project}/export`, expect: manage },
  {
    name: "DELETE project",
    method: "DELETE",
    path: (w) => `/api/projects/${w.project}`,
    expect: { owner: 200, teamAdmin: 403, member: 403, viewer: 403, stranger: 404, siteAdmin: 403, superAdmin: 403, publicVisitor: 404 },
  },
  {
    name: "join by code (those without access join; those with it are 409)",
    method: "POST",
    path: () => "/api/projects/join",
    before: async (w, url) => {
      await request(url, "PUT", `/api/projects/${w.project}`, { token: w.tokens.owner, body: { allow_join_requests: true, join_code: joinCode(w) } });
    },
    body: (w) => ({ join_code: joinCode(w) }),
    expect: { owner: 409, teamAdmin: 409, member: 409, viewer: 409, stranger: 200, siteAdmin: 200, superAdmin: 200, publicVisitor: 200 },
    check: (t, res, w) => {
      if (res.status === 200) t.match(res.body.project, { id: w.project, access: "member" });
      else t.equal(res.body.code, "already_member");
    },
  },
  {
    name: "validate an import",
    method: "POST",
    path: () => "/api/projects/import/validate",
    body: () => ({ bundle }),
    writesNothing: true,
    expect: everyone(200),
    check: (t, res) => t.match(res.body, { valid: true, summary: { name: "Imported" } }),
  },
  {
    name: "import a project (owned by the caller)",
    method: "POST",
    path: () => "/api/projects/import",
    body: () => ({ bundle }),
    expect: everyone(201),
    check: (t, res, w, actor) => t.match(res.body.project, { name: "Imported", owner_id: w.ids[userOf(actor)], access: "owner" }),
  },
  {
    name: "subscriptions (of the caller's own projects)",
    method: "GET",
    path: () => "/api/subscriptions",
    expect: everyone(200),
    check: (t, res, w, actor) => {
      const projects = (res.body.data as { project_id: number }[]).map((s) => s.project_id);
      t.equal(projects.includes(w.project), actor === "owner", `${actor}: ${actor === "owner" ? "sees" : "does not see"} the project's subscription`);
    },
  },
  {
    name: "list teams (the caller's)",
    method: "GET",
    path: () => "/api/teams",
    expect: everyone(200),
    check: listed((w) => w.team, insiders, "the team"),
  },
  {
    name: "create team",
    method: "POST",
    path: () => "/api/teams",
    body: () => ({ name: "New team" }),
    expect: everyone(201),
    check: (t, res, w, actor) => t.match(res.body.team, { owner_id: w.ids[userOf(actor)], role: "owner", members_count: 1 }),
  },
  {
    name: "team roles",
    method: "GET",
    path: () => "/api/team-roles",
    expect: everyone(200),
    check: (t, res) => t.same((res.body.data as { name: string }[]).map((r) => r.name), ["owner", "admin", "member", "viewer"]),
  },
  { name: "GET team", method: "GET", path: (w) => `/api/teams/${w.team}`, expect: view },
  { name: "PUT team", method: "PUT", path: (w) => `/api/teams/${w.team}`, body: () => ({ name: "Renamed" }), expect: manage },
  {
    name: "DELETE team",
    method: "DELETE",
    path: (w) => `/api/teams/${w.team}`,
    expect: { owner: 200, teamAdmin: 403, member: 403, viewer: 403, stranger: 404, siteAdmin: 403, superAdmin: 200, publicVisitor: 404 },
  },
  { name: "GET members", method: "GET", path: (w) => `/api/teams/${w.team}/members`, expect: view },
  {
    name: "add member",
    method: "POST",
    path: (w) => `/api/teams/${w.team}/members`,
    body: (w) => ({ email: w.newcomerEmail, role_id: 3 }),
    expect: { ...manage, owner: 201, teamAdmin: 201, superAdmin: 201 },
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
    expect: { owner: 200, teamAdmin: 200, member: 403, viewer: 200, stranger: 404, siteAdmin: 403, superAdmin: 200, publicVisitor: 404 },
  },
  {
    name: "share another project with the team",
    method: "POST",
    path: (w) => `/api/teams/${w.team}/projects`,
    body: (w) => ({ project_id: w.otherProject }),
    expect: { owner: 201, teamAdmin: 404, member: 403, viewer: 403, stranger: 404, siteAdmin: 403, superAdmin: 201, publicVisitor: 404 },
  },
  { name: "unshare the project", method: "DELETE", path: (w) => `/api/teams/${w.team}/projects/${w.project}`, expect: manage },
];

t.test("authorization matrix", async (t) => {
  const app = await startTestApp(t);
  const users = await buildUsers(app.pool);
  await runMatrix(t, app.url, table, () => buildWorld(app.pool, users), app.pool, { effects: true, tables });
});
