/**
 * Every project and team route × {owner, team admin, member, viewer, stranger, site admin},
 * each with its expected status, from one table. Each cell runs in a fresh world (a
 * project owned by `owner`, shared with a team where the others hold their roles), so
 * destructive routes do not disturb the next cell.
 */
import t from "tap";
import { startTestApp } from "../support/app.ts";
import { request } from "../support/http.ts";
import { buildWorld, manage, runMatrix, view, type MatrixRow } from "../support/matrix.ts";

const lockFirst = async (w: { project: number; tokens: { owner: string } }, url: string) => {
  await request(url, "POST", `/api/projects/${w.project}/lock`, { token: w.tokens.owner });
};
const archiveFirst = async (w: { project: number; tokens: { owner: string } }, url: string) => {
  await request(url, "POST", `/api/projects/${w.project}/archive`, { token: w.tokens.owner });
};

const table: MatrixRow[] = [
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

t.test("authorization matrix", async (t) => {
  const app = await startTestApp(t);
  await runMatrix(t, app.url, table, () => buildWorld(app.pool));
});
