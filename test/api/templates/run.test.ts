/**
 * Running templates and generators through HTTP with a worker: value validation, engine
 * errors, preview warnings, a runaway code block, concurrency, generator runs, the
 * CodeGenerated event, archive deletion and expiry.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { enqueue } from "../../../shared/jobs/enqueue.ts";
import { archivesCleanup } from "../../../shared/jobs/kinds.ts";
import { awaitJob } from "../../../shared/jobs/await.ts";
import { runTemplates } from "../../../shared/templates/run.ts";
import { startTestApp } from "../../support/app.ts";
import { buildProject, buildTeam, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { buildGenerator, buildSchema, buildTemplate } from "../../support/templateFactories.ts";

const count = z.object({ count: z.number() });

t.test("running templates", async (t) => {
  const app = await startTestApp(t, { worker: true });
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = await buildProject(app.pool, user.id);
  const schema = await buildSchema(app.pool, project, user.id);
  const base = `/api/projects/${project}/templates`;
  const generations = () => app.pool.oneFirst(sql.type(count)`select count(*)::int as count from code_generations`);

  t.test("values are validated against the variables (422 field map), nothing recorded", async (t) => {
    const id = await buildTemplate(app.pool, { projectId: project }, user.id, {
      content: "{:name:} {:props.length:}",
      variables: [
        { name: "name", type: "string", required: true },
        { name: "props", type: "list", default_value: [] },
        { name: "flag", type: "boolean" },
        { name: "db", type: "schema" },
      ],
      files: [],
    });
    const before = await generations();
    const missing = await api.post(`${base}/${id}/execute`, {});
    t.equal(missing.status, 422, missing.text);
    t.same(missing.body.errors, { name: ["The name variable is required."] });
    const wrong = await api.post(`${base}/${id}/execute`, { name: 3, props: "x", flag: "yes", db: 987654 });
    t.equal(wrong.status, 422);
    t.same(Object.keys(wrong.body.errors).sort(), ["db", "flag", "name", "props"]);
    const unknownSchema = await api.post(`${base}/${id}/execute`, { name: "a", db: 987654 });
    t.same(unknownSchema.body.errors, { db: ["Schema 987654 is not a parsed schema of this project."] });
    t.equal(await generations(), before, "no generation recorded");

    const ok = await api.post(`${base}/${id}/execute`, { name: "User", props: [{ name: "id", type: "int" }], extra: "passes through" });
    t.equal(ok.status, 200, ok.text);
    t.same([ok.body.output, ok.body.files], ["User 1", {}]);
  });

  t.test("saved values apply under the request's; defaults under both", async (t) => {
    const id = await buildTemplate(app.pool, { projectId: project }, user.id, {
      content: "{:greeting:}, {:name:}",
      variables: [{ name: "greeting", type: "string", default_value: "Hello" }, { name: "name", type: "string", required: true }],
      files: [],
    });
    await api.put(`${base}/${id}/values`, { name: "Saved" });
    t.equal((await api.post(`${base}/${id}/execute`, {})).body.output, "Hello, Saved");
    t.equal((await api.post(`${base}/${id}/execute`, { name: "Given", greeting: "Hi" })).body.output, "Hi, Given");
  });

  t.test("engine errors are 422 with file, line and column", async (t) => {
    const syntax = await buildTemplate(app.pool, { projectId: project }, user.id, { content: "a\n{:if x:}", files: [], variables: [] });
    const res = await api.post(`${base}/${syntax}/execute`, {});
    t.equal(res.status, 422, res.text);
    t.equal(res.body.code, "template_error");
    t.match(Object.keys(res.body.errors)[0], /^\(content\):2:1$/);
    const missingValue = await buildTemplate(app.pool, { projectId: project }, user.id, { content: "ok", files: [{ file_name: "f.txt", content: "\n  {:nope:}" }], variables: [] });
    const res2 = await api.post(`${base}/${missingValue}/execute`, {});
    t.equal(res2.status, 422);
    t.same(Object.keys(res2.body.errors), ["f.txt:2:3"]);
  });

  t.test("preview never fails on a missing value and records nothing", async (t) => {
    const id = await buildTemplate(app.pool, { projectId: project }, user.id, {
      content: "Hello {:name:} {:other:}",
      variables: [{ name: "name", type: "string", required: true }],
      files: [],
    });
    const before = await generations();
    const res = await api.post(`${base}/${id}/preview`, {});
    t.equal(res.status, 200, res.text);
    t.equal(res.body.preview, "Hello  ");
    t.ok(res.body.warnings.some((w: { message: string }) => /name variable is required/.test(w.message)));
    t.ok(res.body.warnings.some((w: { file: string; line: number }) => w.file === "(content)" && w.line === 1));
    t.equal(await generations(), before);
  });

  t.test("a code block that loops forever fails with 422 naming the block; the worker keeps serving", async (t) => {
    const loop = await buildTemplate(app.pool, { projectId: project }, user.id, { content: "x{:code:}while (true) {}{:codeend:}", files: [], variables: [] });
    const res = await api.post(`${base}/${loop}/execute`, {});
    t.equal(res.status, 422, res.text);
    t.match(res.body.message, /Code block `while \(true\) \{\}` exceeded its time limit of 250 ms/);
    const escape = await buildTemplate(app.pool, { projectId: project }, user.id, { content: "{:code:}require('fs'){:codeend:}", files: [], variables: [] });
    t.equal((await api.post(`${base}/${escape}/execute`, {})).status, 422);
    const fine = await buildTemplate(app.pool, { projectId: project }, user.id, { content: "{:code:}[1, 2, 3].map((n) => n * 2).join(','){:codeend:}", files: [], variables: [] });
    const after = await api.post(`${base}/${fine}/execute`, {});
    t.equal(after.status, 200, after.text);
    t.equal(after.body.output, "2,4,6");
  });

  t.test("a template nested too deep is a template error everywhere, never a 500", async (t) => {
    const deep = (n: number) => `${"{:for items:}{:if not not a and (a or a):}".repeat(n)}x${"{:endif:}{:endfor:}".repeat(n)}`;
    for (const [what, content] of [
      ["blocks", deep(2500)],
      ["an expression", `{:if ${"not ".repeat(5000)}a:}x{:endif:}`],
      ["filters", `{:name${"|pascal|snake".repeat(2500)}:}`],
    ] as const) {
      const id = await buildTemplate(app.pool, { projectId: project }, user.id, { content, files: [], variables: [] });
      const compiled = await api.post(`${base}/${id}/compile`);
      t.equal(compiled.status, 200, `${what}: compile answers`);
      t.equal(compiled.body.valid, false);
      t.match(compiled.body.errors[0], { file: "(content)", line: 1, message: /deep|operators/ });
      const before = await generations();
      for (const run of ["execute", "preview"]) {
        const res = await api.post(`${base}/${id}/${run}`, { name: "n", items: [1], a: true });
        t.equal(res.status, 422, `${what}: ${run} is a 422`);
        t.equal(res.body.code, "template_error");
      }
      t.equal(await generations(), before, "nothing recorded");
    }
  });

  t.test("the templates of one run keep within the output limit together", async (t) => {
    const ids = await Promise.all(["A", "B"].map((name) => buildTemplate(app.pool, { projectId: project }, user.id, { name, content: "x".repeat(600), files: [], variables: [] })));
    const run = (templateIds: number[]) =>
      runTemplates(app.pool, { mode: "execute", projectId: project, userId: user.id, templateIds, schemaId: null, baseValues: {}, values: {} }, { maxOutputBytes: 1000 });
    t.equal((await run([ids[0]!])).output.length, 600, "one template fits");
    await t.rejects(run(ids), { status: 422, code: "template_error", message: /output of the run \(all its templates together\) grew past 1000 characters at B/ });
  });

  t.test("concurrent executes each record their own generation", async (t) => {
    const id = await buildTemplate(app.pool, { projectId: project }, user.id);
    const results = await Promise.all(["a", "b", "c", "d", "e"].map((name) => api.post(`${base}/${id}/execute`, { name })));
    t.same(results.map((r) => r.status), [200, 200, 200, 200, 200]);
    const ids = new Set(results.map((r) => r.body.code_generation_id as number));
    t.equal(ids.size, 5);
    t.same(results.map((r) => Object.keys(r.body.files)[0]), ["hello/a.txt", "hello/b.txt", "hello/c.txt", "hello/d.txt", "hello/e.txt"]);
    const events = await app.pool.oneFirst(sql.type(count)`
      select count(*)::int as count from outbox_events where event_type = 'CodeGenerated' and (payload->>'code_generation_id')::bigint = any(${sql.array([...ids], "int8")})`);
    t.equal(events, 5, "one CodeGenerated event each");
    const payload = await app.pool.oneFirst(sql.type(z.object({ payload: z.record(z.string(), z.unknown()) }))`
      select payload from outbox_events where event_type = 'CodeGenerated' order by id desc limit 1`);
    t.same(Object.keys(payload).sort(), ["code_generation_id", "file_count", "generator_id", "schema_id", "template_id", "total_bytes"]);
  });

  t.test("generations list and tree", async (t) => {
    // Its own project and three generations: the list does not count earlier subtests' runs.
    const own = await buildProject(app.pool, user.id);
    const listed = await buildTemplate(app.pool, { projectId: own }, user.id);
    for (const name of ["x", "y", "z"]) t.equal((await api.post(`/api/projects/${own}/templates/${listed}/execute`, { name })).status, 200);
    const list = await api.get(`/api/projects/${own}/code-generations?per_page=2`);
    t.equal(list.status, 200, list.text);
    t.equal(list.body.data.length, 2);
    t.equal(list.body.meta.total, 3);
    t.match(list.body.links.next, /page=2/);
    const id = await buildTemplate(app.pool, { projectId: project }, user.id, {
      content: "",
      variables: [{ name: "schema", type: "schema" }],
      files: [{ file_name: "src/models/{:table.table_name:}.ts", repeat: "schema.tables", content: "// {:table.table_name:}" }, { file_name: "README.md", content: "abc" }],
    });
    const run = await api.post(`${base}/${id}/execute`, { schema });
    const tree = await api.get(`/api/code-generations/${run.body.code_generation_id}/tree`);
    t.equal(tree.status, 200, tree.text);
    t.same(tree.body.tree.map((n: { name: string; size: number }) => [n.name, n.size]), [["src", 16], ["README.md", 3]]);
    t.same(tree.body.tree[0].children[0].children.map((n: { path: string }) => n.path), ["src/models/posts.ts", "src/models/users.ts"]);
  });

  t.test("archives: delete, expiry cleanup", async (t) => {
    const id = await buildTemplate(app.pool, { projectId: project }, user.id);
    const first = (await api.post(`${base}/${id}/execute`, { name: "one" })).body.code_generation_id as number;
    const second = (await api.post(`${base}/${id}/execute`, { name: "two" })).body.code_generation_id as number;
    t.equal((await api.get(`/api/archives/${first}/download`)).status, 200);
    const download = await fetch(`${app.url}/api/archives/${second}/download`, { headers: { authorization: `Bearer ${token}` } });
    t.equal(download.status, 200);
    const zipSize = (await download.arrayBuffer()).byteLength;

    // The spec's "Project archive": id, code_generation_id, file_path, file_size, created_at, expires_at.
    const archive = (await api.get(`/api/code-generations/${second}`)).body.code_generation.archive;
    const stored = await app.pool.one(sql.type(z.object({ id: z.number(), created_at: z.date(), expires_at: z.date() }))`
      select id, created_at, expires_at from project_archives where code_generation_id = ${second}`);
    t.same(Object.keys(archive).sort(), ["code_generation_id", "created_at", "download_url", "expires_at", "file_path", "file_size", "id", "status"]);
    t.same(archive, {
      id: stored.id,
      code_generation_id: second,
      file_path: /filename="([^"]+)"/.exec(download.headers.get("content-disposition") ?? "")?.[1],
      file_size: zipSize,
      created_at: stored.created_at.toISOString(),
      expires_at: stored.expires_at.toISOString(),
      status: "ready",
      download_url: `/api/archives/${second}/download`,
    }, "file_path is the name the download is saved under, file_size its bytes");
    t.match(archive.file_path, new RegExp(`^[\\w.-]+-${second}\\.zip$`), "a file name, no storage path");
    const listed = (await api.get(`/api/projects/${project}/code-generations`)).body.data.find((g: { id: number }) => g.id === second);
    t.same(listed.archive, archive, "the list shows the same archive");

    t.equal((await api.delete(`/api/archives/${first}`)).status, 200);
    t.equal((await api.get(`/api/archives/${first}/download`)).status, 404);
    t.equal((await api.delete(`/api/archives/${first}`)).status, 404);
    t.match((await api.get(`/api/code-generations/${first}`)).body.code_generation.archive, { code_generation_id: first, status: "deleted", download_url: null, file_size: Number });

    await app.pool.query(sql.type(z.object({}))`update project_archives set expires_at = now() - interval '1 minute' where code_generation_id = ${second}`);
    t.equal((await api.get(`/api/archives/${second}/download`)).status, 404, "expired: 404 even before the cleanup");
    const job = await enqueue(app.pool, archivesCleanup, {});
    const done = await awaitJob(app.pool, app.deps.hub, job.id, 10_000);
    t.equal(done.status, "succeeded");
    t.ok((done.result as { removed: number }).removed >= 1);
    t.same(await app.deps.storage.list(`archives/generation-${second}-`), [], "the zip is gone from storage");
    t.match((await api.get(`/api/code-generations/${second}`)).body.code_generation.archive, { id: stored.id, status: "expired", download_url: null, file_size: zipSize });
  });

  t.test("generators: one generation from several templates; collisions are 422; status rules", async (t) => {
    const member = await buildUserWithToken(app.pool);
    const team = await buildTeam(app.pool, user.id, { [member.user.id]: 3 });
    const a = await buildTemplate(app.pool, { projectId: project }, user.id, {
      name: "A",
      content: "A:{:name:}",
      variables: [{ name: "schema", type: "schema" }, { name: "name", type: "string" }],
      files: [{ file_name: "a/{:table.table_name:}.txt", repeat: "schema.tables", content: "{:name:}" }],
    });
    const b = await buildTemplate(app.pool, { projectId: project }, user.id, { name: "B", content: "B", variables: [], files: [{ file_name: "b.txt", content: "{:schema.tables.length:}" }] });
    const created = await api.post("/api/generators", { project_id: project, name: "Both", team_id: team, schema_id: schema, template_ids: [a, b], values: { name: "gen" } });
    t.equal(created.status, 201, created.text);
    const gid = created.body.generator.id as number;
    t.same(created.body.generator.template_ids, [a, b]);
    t.equal(created.body.generator.status, "Draft");

    const memberApi = client(app.url, member.token);
    t.equal((await memberApi.get(`/api/generators/${gid}`)).status, 200, "team members see it");
    t.equal((await memberApi.post(`/api/generators/${gid}/execute`, {})).status, 403, "a Draft runs only for its owner");
    t.equal((await memberApi.put(`/api/generators/${gid}`, { name: "x" })).status, 403, "team members without the admin role may not edit");

    const run = await api.post(`/api/generators/${gid}/execute`, { name: "override" });
    t.equal(run.status, 200, run.text);
    t.same(Object.keys(run.body.files).sort(), ["a/posts.txt", "a/users.txt", "b.txt"]);
    t.equal(run.body.files["a/users.txt"], "override");
    t.equal(run.body.files["b.txt"], "2", "the generator's schema is `schema` for templates that declare none");
    t.equal(run.body.output, "A:override\nB");
    const generation = await api.get(`/api/code-generations/${run.body.code_generation_id}`);
    t.same([generation.body.code_generation.generator.id, generation.body.code_generation.template, generation.body.code_generation.schema_id], [gid, null, schema]);

    // Spec: updated by a viewer holding the admin role, deleted by its owner holding the admin role.
    t.equal((await api.put(`/api/generators/${gid}`, { status: "Published" })).status, 403, "its owner needs the admin role to change it");
    t.equal((await api.delete(`/api/generators/${gid}`)).status, 403, "and to delete it");
    await app.pool.query(sql.type(z.object({}))`insert into user_roles (user_id, role) values (${user.id}, 'admin'), (${member.user.id}, 'admin')`);
    t.equal((await api.put(`/api/generators/${gid}`, { status: "Published" })).status, 200);
    t.equal((await memberApi.post(`/api/generators/${gid}/execute`, {})).status, 200, "Published runs for team members");
    t.equal((await memberApi.put(`/api/generators/${gid}`, { description: "by a member" })).status, 200, "a team member holding the admin role edits");

    const clash = await buildTemplate(app.pool, { projectId: project }, user.id, { name: "C", content: "", variables: [], files: [{ file_name: "b.txt", content: "again" }] });
    await api.put(`/api/generators/${gid}`, { template_ids: [a, b, clash] });
    const collided = await api.post(`/api/generators/${gid}/execute`, {});
    t.equal(collided.status, 422);
    t.match(collided.body.errors.files[0], /b\.txt is written by both B and C/);

    t.equal((await api.put(`/api/generators/${gid}`, { status: "Archived" })).status, 200);
    t.equal((await api.post(`/api/generators/${gid}/execute`, {})).status, 403, "Archived runs for nobody");
    t.equal((await api.put(`/api/generators/${gid}`, { name: "renamed" })).status, 409, "Archived is read-only");
    t.equal((await api.put(`/api/generators/${gid}`, { status: "Published" })).status, 422, "unarchive goes to Draft");
    t.equal((await api.put(`/api/generators/${gid}`, { status: "Draft" })).status, 200);
    t.equal((await api.put(`/api/generators/${gid}`, { template_ids: [], status: "Published" })).status, 422, "publishing needs a template");

    t.equal((await api.post("/api/generators", { project_id: project, name: "x", template_ids: [999999] })).status, 422);
    t.equal((await api.post("/api/generators", { project_id: project, name: "x", schema_id: 999999 })).status, 422);
    const otherTeam = await buildTeam(app.pool, member.user.id);
    t.equal((await api.post("/api/generators", { project_id: project, name: "x", team_id: otherTeam })).status, 422, "only a team of the caller");

    t.equal((await memberApi.delete(`/api/generators/${gid}`)).status, 403, "only its owner deletes it, admin role or not");
    t.equal((await api.delete(`/api/generators/${gid}`)).status, 200);
    t.equal((await api.get(`/api/generators/${gid}`)).status, 404);
    t.equal((await api.get(`/api/code-generations/${run.body.code_generation_id}`)).body.code_generation.generator, null);
  });
});

t.test("a generator row built directly runs too", async (t) => {
  const app = await startTestApp(t, { worker: true });
  const { user, token } = await buildUserWithToken(app.pool);
  const project = await buildProject(app.pool, user.id);
  const template = await buildTemplate(app.pool, { projectId: project }, user.id);
  const id = await buildGenerator(app.pool, { userId: user.id, projectId: project, templateIds: [template], values: { name: "x" } });
  const res = await client(app.url, token).post(`/api/generators/${id}/execute`, {});
  t.equal(res.status, 200, res.text);
  t.same(Object.keys(res.body.files), ["hello/x.txt"]);
});
