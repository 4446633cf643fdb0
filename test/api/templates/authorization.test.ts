/**
 * Template, variable, file, generation, archive and generator routes × {owner, team admin,
 * member, viewer, stranger, site admin, super admin, public visitor}, each with its expected
 * status, from one table. A world is a project owned by `owner` (made public for the public
 * visitor's cells), shared with a team in which the others hold their roles, with a template,
 * a recorded generation with its archive, and a Published generator of `owner` shared with
 * the same team. Rows that create, duplicate or delete get a fresh world per cell; the
 * others share one (no cell of theirs changes what the next one sees). Rows marked
 * `adminRole` run with users who all hold the `admin` site role as well (the generator policy
 * turns on it). Once the worker has finished every job, a refused cell has written nothing to
 * the tables these routes write, and an allowed write cell has written there.
 */
import type pg from "pg";
import t from "tap";
import { z } from "zod";
import { sql, type DatabasePool } from "../../../shared/db/pool.ts";
import { buildArchive } from "../../../shared/generations/archive.ts";
import { recordGeneration } from "../../../shared/generations/record.ts";
import type { Storage } from "../../../shared/storage/storage.ts";
import { startTestApp } from "../../support/app.ts";
import { buildUsers, buildWorld, content, runMatrix, view, type MatrixRow, type World, type WorldUsers } from "../../support/matrix.ts";
import { buildGenerator, buildTemplate } from "../../support/templateFactories.ts";
import { workerIdle } from "../../support/workerIdle.ts";

interface TemplateWorld extends World {
  template: number;
  variable: number;
  file: number;
  generation: number;
  generator: number;
}

interface Row extends MatrixRow<TemplateWorld> {
  /** Every actor also holds the `admin` site role. */
  adminRole?: boolean;
  /** Each cell gets its own world (the row creates what a second cell would collide with, or removes what it names). */
  fresh?: boolean;
}

const created = { ...content, owner: 201, teamAdmin: 201, member: 201, superAdmin: 201 };
const tp = (w: TemplateWorld) => `/api/projects/${w.project}/templates/${w.template}`;

/** What these routes and their jobs write (allowed cells show that their writes land here). */
const tables = [
  ...["templates", "template_variables", "template_files", "template_variable_values", "template_media", "media_garbage"],
  ...["code_generations", "code_generation_files", "project_archives", "generators", "generator_templates", "stored_files", "stored_file_chunks"],
  ...["credit_accounts", "credit_ledger", "credit_transactions", "jobs", "audit_log", "outbox_events"],
];

const table: Row[] = [
  { name: "list templates", method: "GET", path: (w) => `/api/projects/${w.project}/templates`, expect: view },
  { name: "read template", method: "GET", path: tp, expect: view },
  { name: "create template", fresh: true, method: "POST", path: (w) => `/api/projects/${w.project}/templates`, body: () => ({ name: "N" }), expect: created },
  { name: "update template", method: "PUT", path: tp, body: () => ({ name: "N" }), expect: content },
  { name: "delete template", fresh: true, method: "DELETE", path: tp, expect: content },
  { name: "duplicate template", fresh: true, method: "POST", path: (w) => `${tp(w)}/duplicate`, body: () => ({}), expect: created },
  { name: "compile", method: "POST", path: (w) => `${tp(w)}/compile`, writesNothing: true, expect: view },
  { name: "structure", method: "GET", path: (w) => `${tp(w)}/structure`, expect: view },
  { name: "read values", method: "GET", path: (w) => `${tp(w)}/values`, expect: view },
  { name: "save values", method: "PUT", path: (w) => `${tp(w)}/values`, body: () => ({ name: "x" }), expect: content },
  { name: "list variables", method: "GET", path: (w) => `${tp(w)}/variables`, expect: view },
  { name: "create variable", fresh: true, method: "POST", path: (w) => `${tp(w)}/variables`, body: () => ({ name: "other" }), expect: created },
  { name: "update variable", method: "PUT", path: (w) => `${tp(w)}/variables/${w.variable}`, body: () => ({ description: "d" }), expect: content },
  { name: "delete variable", fresh: true, method: "DELETE", path: (w) => `${tp(w)}/variables/${w.variable}`, expect: content },
  { name: "list files", method: "GET", path: (w) => `${tp(w)}/files`, expect: view },
  { name: "create file", fresh: true, method: "POST", path: (w) => `${tp(w)}/files`, body: () => ({ file_name: "b.txt" }), expect: created },
  { name: "update file", method: "PUT", path: (w) => `${tp(w)}/files/${w.file}`, body: () => ({ content: "c" }), expect: content },
  { name: "delete file", fresh: true, method: "DELETE", path: (w) => `${tp(w)}/files/${w.file}`, expect: content },
  { name: "preview", method: "POST", path: (w) => `${tp(w)}/preview`, body: () => ({}), expect: view },
  { name: "execute", method: "POST", path: (w) => `${tp(w)}/execute`, body: () => ({ name: "x" }), expect: content, writes: ["code_generations"] },
  { name: "list generations", method: "GET", path: (w) => `/api/projects/${w.project}/code-generations`, expect: view },
  { name: "read generation", method: "GET", path: (w) => `/api/code-generations/${w.generation}`, expect: view },
  { name: "generation tree", method: "GET", path: (w) => `/api/code-generations/${w.generation}/tree`, expect: view },
  { name: "download archive", method: "GET", path: (w) => `/api/archives/${w.generation}/download`, expect: view },
  { name: "delete archive", fresh: true, method: "DELETE", path: (w) => `/api/archives/${w.generation}`, expect: content },
  // Generators (spec "Authentication" 12): viewed by its owner or a member of its team (site
  // admins see every one); updated by a viewer holding the admin role; deleted by its owner
  // holding the admin role; super admins may do all.
  { name: "read generator", method: "GET", path: (w) => `/api/generators/${w.generator}`, expect: view },
  {
    name: "update generator: without the admin role only super admins",
    method: "PUT",
    path: (w) => `/api/generators/${w.generator}`,
    body: () => ({ description: "changed" }),
    expect: { owner: 403, teamAdmin: 403, member: 403, viewer: 403, stranger: 404, siteAdmin: 403, superAdmin: 200, publicVisitor: 404 },
  },
  {
    name: "update generator: every viewer holding the admin role",
    method: "PUT",
    path: (w) => `/api/generators/${w.generator}`,
    body: () => ({ description: "changed" }),
    adminRole: true,
    expect: { owner: 200, teamAdmin: 200, member: 200, viewer: 200, stranger: 403, siteAdmin: 403, superAdmin: 200, publicVisitor: 403 },
  },
  {
    name: "delete generator: without the admin role only super admins",
    fresh: true,
    method: "DELETE",
    path: (w) => `/api/generators/${w.generator}`,
    expect: { owner: 403, teamAdmin: 403, member: 403, viewer: 403, stranger: 404, siteAdmin: 403, superAdmin: 200, publicVisitor: 404 },
  },
  {
    name: "delete generator: its owner holding the admin role",
    fresh: true,
    method: "DELETE",
    path: (w) => `/api/generators/${w.generator}`,
    adminRole: true,
    expect: { owner: 200, teamAdmin: 403, member: 403, viewer: 403, stranger: 403, siteAdmin: 403, superAdmin: 200, publicVisitor: 403 },
  },
  {
    name: "run a Published generator (its viewers; site admins only see it)",
    method: "POST",
    path: (w) => `/api/generators/${w.generator}/execute`,
    body: () => ({ name: "y" }),
    expect: { ...view, siteAdmin: 403 },
    writes: ["code_generations"],
  },
];


/** The template, generation, archive and generator of a world, on a project and team of `users`. */
async function buildTemplateWorld(pool: DatabasePool, pgPool: pg.Pool, storage: Storage, users: WorldUsers): Promise<TemplateWorld> {
  const world = await buildWorld(pool, users);
  const owner = users.ids.owner;
  const template = await buildTemplate(pool, { projectId: world.project }, owner);
  const ids = await pool.one(sql.type(z.object({ variable: z.number(), file: z.number() }))`
    select (select id from template_variables where template_id = ${template}) as variable, (select id from template_files where template_id = ${template}) as file`);
  const generation = await recordGeneration(pool, {
    projectId: world.project,
    userId: owner,
    templateId: template,
    generatorId: null,
    schemaId: null,
    values: { name: "w" },
    files: { "hello/w.txt": "Hi W" },
    jobId: null,
  });
  await buildArchive({ pool, pgPool, storage }, generation, 1);
  const generator = await buildGenerator(pool, { userId: owner, projectId: world.project, templateIds: [template], teamId: world.team, status: "Published" });
  return { ...world, template, ...ids, generation, generator };
}

t.test("authorization matrix of templates, generations, archives and generators", async (t) => {
  const app = await startTestApp(t, { worker: true });
  const settle = () => workerIdle(app.pool);
  const options = { settle, effects: true, tables };
  for (const adminRole of [false, true]) {
    const users = await buildUsers(app.pool, { everyoneAdmin: adminRole });
    const rows = table.filter((row) => (row.adminRole ?? false) === adminRole);
    let shared: Promise<TemplateWorld> | undefined;
    await runMatrix(t, app.url, rows.filter((row) => !row.fresh), () => (shared ??= buildTemplateWorld(app.pool, app.db.pgPool, app.deps.storage, users)), app.pool, options);
    await runMatrix(t, app.url, rows.filter((row) => row.fresh), () => buildTemplateWorld(app.pool, app.db.pgPool, app.deps.storage, users), app.pool, options);
  }
});
