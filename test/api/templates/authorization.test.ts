/**
 * Template, variable, file, generation, archive and generator routes × {owner, team admin,
 * member, viewer, stranger, site admin, super admin, public visitor}, each with its expected
 * status, from one table. Each cell runs in a fresh world: a project owned by `owner`
 * (public for the public visitor's cells), shared with a team in which the others hold
 * their roles, with a template, a recorded generation with its archive, and a Published
 * generator of `owner` shared with the same team. Rows marked `adminRole` give every actor
 * the `admin` site role as well (the generator policy turns on it).
 */
import t from "tap";
import { z } from "zod";
import { sql, type DatabasePool } from "../../../shared/db/pool.ts";
import { buildArchive } from "../../../shared/generations/archive.ts";
import { recordGeneration } from "../../../shared/generations/record.ts";
import type { Storage } from "../../../shared/storage/storage.ts";
import { startTestApp } from "../../support/app.ts";
import { buildProject, buildTeam, buildUserWithToken } from "../../support/factories.ts";
import { request } from "../../support/http.ts";
import { buildGenerator, buildTemplate } from "../../support/templateFactories.ts";

const actors = ["owner", "teamAdmin", "member", "viewer", "stranger", "siteAdmin", "superAdmin", "publicVisitor"] as const;
type Actor = (typeof actors)[number];

interface World {
  project: number;
  template: number;
  variable: number;
  file: number;
  generation: number;
  generator: number;
  tokens: Record<Actor, string>;
}

interface Row {
  name: string;
  method: string;
  path: (w: World) => string;
  body?: unknown;
  /** Every actor also holds the `admin` site role. */
  adminRole?: boolean;
  expect: Record<Actor, number>;
}

const view = { owner: 200, teamAdmin: 200, member: 200, viewer: 200, stranger: 404, siteAdmin: 200, superAdmin: 200, publicVisitor: 404 };
const content = { owner: 200, teamAdmin: 200, member: 200, viewer: 403, stranger: 404, siteAdmin: 403, superAdmin: 200, publicVisitor: 404 };
const created = { ...content, owner: 201, teamAdmin: 201, member: 201, superAdmin: 201 };
const tp = (w: World) => `/api/projects/${w.project}/templates/${w.template}`;

const table: Row[] = [
  { name: "list templates", method: "GET", path: (w) => `/api/projects/${w.project}/templates`, expect: view },
  { name: "read template", method: "GET", path: tp, expect: view },
  { name: "create template", method: "POST", path: (w) => `/api/projects/${w.project}/templates`, body: { name: "N" }, expect: created },
  { name: "update template", method: "PUT", path: tp, body: { name: "N" }, expect: content },
  { name: "delete template", method: "DELETE", path: tp, expect: content },
  { name: "duplicate template", method: "POST", path: (w) => `${tp(w)}/duplicate`, body: {}, expect: created },
  { name: "compile", method: "POST", path: (w) => `${tp(w)}/compile`, expect: view },
  { name: "structure", method: "GET", path: (w) => `${tp(w)}/structure`, expect: view },
  { name: "read values", method: "GET", path: (w) => `${tp(w)}/values`, expect: view },
  { name: "save values", method: "PUT", path: (w) => `${tp(w)}/values`, body: { name: "x" }, expect: content },
  { name: "list variables", method: "GET", path: (w) => `${tp(w)}/variables`, expect: view },
  { name: "create variable", method: "POST", path: (w) => `${tp(w)}/variables`, body: { name: "other" }, expect: created },
  { name: "update variable", method: "PUT", path: (w) => `${tp(w)}/variables/${w.variable}`, body: { description: "d" }, expect: content },
  { name: "delete variable", method: "DELETE", path: (w) => `${tp(w)}/variables/${w.variable}`, expect: content },
  { name: "list files", method: "GET", path: (w) => `${tp(w)}/files`, expect: view },
  { name: "create file", method: "POST", path: (w) => `${tp(w)}/files`, body: { file_name: "b.txt" }, expect: created },
  { name: "update file", method: "PUT", path: (w) => `${tp(w)}/files/${w.file}`, body: { content: "c" }, expect: content },
  { name: "delete file", method: "DELETE", path: (w) => `${tp(w)}/files/${w.file}`, expect: content },
  { name: "preview", method: "POST", path: (w) => `${tp(w)}/preview`, body: {}, expect: view },
  { name: "execute", method: "POST", path: (w) => `${tp(w)}/execute`, body: { name: "x" }, expect: content },
  { name: "list generations", method: "GET", path: (w) => `/api/projects/${w.project}/code-generations`, expect: view },
  { name: "read generation", method: "GET", path: (w) => `/api/code-generations/${w.generation}`, expect: view },
  { name: "generation tree", method: "GET", path: (w) => `/api/code-generations/${w.generation}/tree`, expect: view },
  { name: "download archive", method: "GET", path: (w) => `/api/archives/${w.generation}/download`, expect: view },
  { name: "delete archive", method: "DELETE", path: (w) => `/api/archives/${w.generation}`, expect: content },
  // Generators (spec "Authentication" 12): viewed by its owner or a member of its team (site
  // admins see every one); updated by a viewer holding the admin role; deleted by its owner
  // holding the admin role; super admins may do all.
  { name: "read generator", method: "GET", path: (w) => `/api/generators/${w.generator}`, expect: view },
  {
    name: "update generator: without the admin role only super admins",
    method: "PUT",
    path: (w) => `/api/generators/${w.generator}`,
    body: { description: "changed" },
    expect: { owner: 403, teamAdmin: 403, member: 403, viewer: 403, stranger: 404, siteAdmin: 403, superAdmin: 200, publicVisitor: 404 },
  },
  {
    name: "update generator: every viewer holding the admin role",
    method: "PUT",
    path: (w) => `/api/generators/${w.generator}`,
    body: { description: "changed" },
    adminRole: true,
    expect: { owner: 200, teamAdmin: 200, member: 200, viewer: 200, stranger: 403, siteAdmin: 403, superAdmin: 200, publicVisitor: 403 },
  },
  {
    name: "delete generator: without the admin role only super admins",
    method: "DELETE",
    path: (w) => `/api/generators/${w.generator}`,
    expect: { owner: 403, teamAdmin: 403, member: 403, viewer: 403, stranger: 404, siteAdmin: 403, superAdmin: 200, publicVisitor: 404 },
  },
  {
    name: "delete generator: its owner holding the admin role",
    method: "DELETE",
    path: (w) => `/api/generators/${w.generator}`,
    adminRole: true,
    expect: { owner: 200, teamAdmin: 403, member: 403, viewer: 403, stranger: 403, siteAdmin: 403, superAdmin: 200, publicVisitor: 403 },
  },
  {
    name: "run a Published generator (its viewers; site admins only see it)",
    method: "POST",
    path: (w) => `/api/generators/${w.generator}/execute`,
    body: { name: "y" },
    expect: { ...view, siteAdmin: 403 },
  },
];

async function buildWorld(pool: DatabasePool, storage: Storage, actor: Actor, adminRole = false): Promise<World> {
  const roles = (a: Actor) => (a === "superAdmin" ? ["super_admin" as const] : a === "siteAdmin" || adminRole ? ["admin" as const] : []);
  const entries = await Promise.all(actors.map(async (a) => [a, await buildUserWithToken(pool, { roles: roles(a) })] as const));
  const users = Object.fromEntries(entries) as Record<Actor, Awaited<ReturnType<typeof buildUserWithToken>>>;
  const owner = users.owner.user.id;
  const project = await buildProject(pool, owner, { isPublic: actor === "publicVisitor" });
  const team = await buildTeam(pool, owner, { [users.teamAdmin.user.id]: 2, [users.member.user.id]: 3, [users.viewer.user.id]: 4 }, [project]);
  const template = await buildTemplate(pool, { projectId: project }, owner);
  const ids = await pool.one(sql.type(z.object({ variable: z.number(), file: z.number() }))`
    select (select id from template_variables where template_id = ${template}) as variable, (select id from template_files where template_id = ${template}) as file`);
  const generation = await recordGeneration(pool, {
    projectId: project,
    userId: owner,
    templateId: template,
    generatorId: null,
    schemaId: null,
    values: { name: "w" },
    files: { "hello/w.txt": "Hi W" },
    jobId: null,
  });
  await buildArchive(pool, storage, generation, 1);
  const generator = await buildGenerator(pool, { userId: owner, projectId: project, templateIds: [template], teamId: team, status: "Published" });
  return { project, template, ...ids, generation, generator, tokens: Object.fromEntries(actors.map((a) => [a, users[a].token])) as Record<Actor, string> };
}

t.test("authorization matrix of templates, generations, archives and generators", async (t) => {
  const app = await startTestApp(t, { worker: true });
  for (const row of table) {
    t.test(row.name, async (t) => {
      for (const actor of actors) {
        const world = await buildWorld(app.pool, app.deps.storage, actor, row.adminRole);
        const res = await request(app.url, row.method, row.path(world), { token: world.tokens[actor], ...(row.body !== undefined ? { body: row.body } : {}) });
        const expected = row.expect[actor];
        t.equal(res.status, expected, `${actor}: ${expected}${res.status === expected ? "" : ` (got ${res.status} ${res.text.slice(0, 160)})`}`);
        if (res.status === 403) t.equal(res.body.code, "forbidden");
        if (res.status === 404) t.equal(res.body.code, "not_found");
      }
    });
  }
});
