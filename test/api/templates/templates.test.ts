/**
 * Templates through HTTP: CRUD and validation, variables, files, duplicate, compile,
 * structure, saved values, top-level templates used in a project, counts and bundles.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { buildSchema, buildTemplate } from "../../support/templateFactories.ts";

const count = z.object({ count: z.number() });

t.test("templates", async (t) => {
  const app = await startTestApp(t);
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = await buildProject(app.pool, user.id);
  const base = `/api/projects/${project}/templates`;

  t.test("create, list, read, update, delete", async (t) => {
    const created = await api.post(base, { name: "Entity", description: "d", content: "class {:name:} {}", engine_type: "ultimate" });
    t.equal(created.status, 201, created.text);
    t.equal(created.body.message, "Template created.");
    const template = created.body.template;
    t.same(template.variables, []);
    t.equal(template.engine_type, "ultimate");

    const list = await api.get(base);
    t.equal(list.status, 200);
    t.same(Object.keys(list.body.data[0]).sort(), ["created_at", "description", "engine_type", "id", "name", "project_id", "updated_at"]);

    const read = await api.get(`${base}/${template.id}`);
    t.equal(read.body.template.content, "class {:name:} {}");

    const updated = await api.put(`${base}/${template.id}`, { name: "Entity 2", content: "x" });
    t.equal(updated.status, 200, updated.text);
    t.equal(updated.body.template.name, "Entity 2");
    t.equal(updated.body.template.description, "d", "fields left out stay");

    const projectRes = await api.get(`/api/projects/${project}`);
    t.ok(projectRes.body.project.templates_count >= 1, "templates_count counts the project's templates");

    const deleted = await api.delete(`${base}/${template.id}`);
    t.same([deleted.status, deleted.body.message], [200, "Template deleted."]);
    t.equal((await api.get(`${base}/${template.id}`)).status, 404);
  });

  t.test("validation: 422 with a field map, nothing written", async (t) => {
    const before = await app.pool.oneFirst(sql.type(count)`select count(*)::int as count from templates`);
    const cases: [unknown, string][] = [
      [{ description: "no name" }, "name"],
      [{ name: "x", engine_type: "handlebars" }, "engine_type"],
      [{ name: "x", variables: [{ name: "1bad" }] }, "variables.0.name"],
      [{ name: "x", variables: [{ name: "a", type: "date" }] }, "variables.0.type"],
      [{ name: "x", variables: [{ name: "a", type: "number", default_value: "ten" }] }, "variables.0.default_value"],
      [{ name: "x", variables: [{ name: "a" }, { name: "a" }] }, "variables.1.name"],
      [{ name: "x", files: [{ file_name: "../{:a:}.ts" }] }, "files.0.file_name"],
      [{ name: "x", files: [{ file_name: "/etc/passwd" }] }, "files.0.file_name"],
      [{ name: "x", files: [{ file_name: "{:a|shout:}.ts" }] }, "files.0.file_name"],
      [{ name: "x", files: [{ file_name: "a.ts", repeat: "schema..tables" }] }, "files.0.file_name"],
      [{ name: "x", files: [{ file_name: "a.ts" }, { file_name: "a.ts" }] }, "files.1.file_name"],
    ];
    for (const [body, field] of cases) {
      const res = await api.post(base, body);
      t.equal(res.status, 422, `${JSON.stringify(body)} → 422`);
      t.ok(res.body.errors?.[field], `${field} is named: ${res.text}`);
    }
    t.equal(await app.pool.oneFirst(sql.type(count)`select count(*)::int as count from templates`), before);
  });

  t.test("variables CRUD", async (t) => {
    const id = await buildTemplate(app.pool, { projectId: project }, user.id);
    const vars = `${base}/${id}/variables`;
    const created = await api.post(vars, { name: "count", type: "number", default_value: 3, description: "How many" });
    t.equal(created.status, 201, created.text);
    t.same({ ...created.body.variable, id: 0 }, { id: 0, name: "count", description: "How many", type: "number", required: false, default_value: 3, position: 1 });
    t.equal((await api.post(vars, { name: "count" })).status, 422, "duplicate name");
    t.equal((await api.post(vars, { name: "s", type: "schema", default_value: 1 })).status, 422, "schema variables have no default");
    const changed = await api.put(`${vars}/${created.body.variable.id}`, { type: "string" });
    t.equal(changed.status, 200, changed.text);
    t.equal(changed.body.variable.default_value, null, "a default that no longer fits is dropped");
    t.equal((await api.put(`${vars}/${created.body.variable.id}`, { default_value: 5 })).status, 422);
    const list = await api.get(vars);
    t.same(list.body.data.map((v: { name: string }) => v.name), ["name", "count"]);
    t.equal((await api.get(`${vars}/${created.body.variable.id}`)).body.variable.type, "string");
    t.equal((await api.delete(`${vars}/${created.body.variable.id}`)).status, 200);
    t.equal((await api.get(`${vars}/${created.body.variable.id}`)).status, 404);
  });

  t.test("files CRUD with engine-checked names", async (t) => {
    const id = await buildTemplate(app.pool, { projectId: project }, user.id);
    const files = `${base}/${id}/files`;
    const created = await api.post(files, { file_name: "src/{:table.table_name|pascal:}.ts", content: "x", repeat: "schema.tables", order: 5 });
    t.equal(created.status, 201, created.text);
    t.same([created.body.file.order, created.body.file.repeat], [5, "schema.tables"]);
    const bad = await api.post(files, { file_name: "{:for x:}.ts" });
    t.equal(bad.status, 422);
    t.match(bad.body.errors.file_name[0], /1:1/);
    t.equal((await api.post(files, { file_name: "src/{:table.table_name|pascal:}.ts" })).status, 422, "duplicate name");
    const moved = await api.put(`${files}/${created.body.file.id}`, { file_name: "lib/{:table.table_name:}.ts" });
    t.equal(moved.status, 200, moved.text);
    t.equal((await api.put(`${files}/${created.body.file.id}`, { file_name: "a\\b.ts" })).status, 422, "backslash refused");
    t.equal((await api.get(files)).body.data.length, 2);
    t.equal((await api.delete(`${files}/${created.body.file.id}`)).status, 200);
    t.equal((await api.get(`${files}/${created.body.file.id}`)).status, 404);
  });

  t.test("compile reports errors with positions", async (t) => {
    const id = await buildTemplate(app.pool, { projectId: project }, user.id, {
      content: "ok\n  {:if:}",
      files: [{ file_name: "a.txt", content: "{:for items:}" }],
    });
    const res = await api.post(`${base}/${id}/compile`);
    t.equal(res.status, 200, res.text);
    t.equal(res.body.valid, false);
    t.same(
      res.body.errors.map((e: { file: string; line: number; column: number }) => [e.file, e.line, e.column]),
      [["(content)", 2, 7], ["a.txt", 1, 1]],
    );
    const good = await buildTemplate(app.pool, { projectId: project }, user.id);
    t.same((await api.post(`${base}/${good}/compile`)).body, { valid: true, errors: [] });
  });

  t.test("structure, saved values, schema input", async (t) => {
    const schema = await buildSchema(app.pool, project, user.id);
    const id = await buildTemplate(app.pool, { projectId: project }, user.id, {
      variables: [{ name: "schema", type: "schema", required: true }, { name: "ns", type: "string", default_value: "app" }],
      files: [
        { file_name: "{:ns:}/models/{:table.table_name|singular|pascal:}.ts", repeat: "schema.tables", content: "" },
        { file_name: "{:ns:}/index.ts", content: "" },
        { file_name: "_partial.ts", content: "" },
      ],
    });
    const empty = await api.get(`${base}/${id}/structure`);
    t.equal(empty.status, 200, empty.text);
    t.same(empty.body.paths, ["app/index.ts"], "no schema yet: repeated files render zero times");
    t.ok(empty.body.warnings.length >= 1, "the missing schema is a warning");

    t.equal((await api.put(`${base}/${id}/values`, { schema: 999999 })).status, 422, "unknown schema");
    t.equal((await api.put(`${base}/${id}/values`, { ns: 5 })).status, 422, "wrong type");
    const saved = await api.put(`${base}/${id}/values`, { schema, ns: "core" });
    t.equal(saved.status, 200, saved.text);
    t.same((await api.get(`${base}/${id}/values`)).body.values, { schema, ns: "core" });

    const structure = await api.get(`${base}/${id}/structure`);
    t.same(structure.body.paths, ["core/models/User.ts", "core/models/Post.ts", "core/index.ts"]);
    t.same(structure.body.tree.map((n: { name: string; type: string }) => [n.name, n.type]), [["core", "folder"]]);
    t.same(structure.body.tree[0].children.map((n: { name: string }) => n.name), ["models", "index.ts"]);
    const over = await api.get(`${base}/${id}/structure?values=${encodeURIComponent(JSON.stringify({ ns: "web" }))}`);
    t.equal(over.body.paths[2], "web/index.ts", "query values win over saved ones");
    t.equal((await api.get(`${base}/${id}/structure?values=[1]`)).status, 422);
    // A template that does not compile had made the structure a 500.
    const broken = await buildTemplate(app.pool, { projectId: project }, user.id, { content: "ok\n{:if a:}", files: [], variables: [] });
    const refused = await api.get(`${base}/${broken}/structure`);
    t.equal(refused.status, 422, refused.text.slice(0, 300));
    t.match(refused.body, { code: "template_error", message: /^Template error at \(content\):2:1: /, errors: { "(content):2:1": [/./] } });
  });

  t.test("duplicate; top-level templates used in a project", async (t) => {
    const id = await buildTemplate(app.pool, { projectId: project }, user.id);
    const copy = await api.post(`${base}/${id}/duplicate`, {});
    t.equal(copy.status, 201, copy.text);
    t.equal(copy.body.template.name, "Greeting (copy)");
    t.equal(copy.body.template.files.length, 1);
    t.equal(copy.body.template.variables[0].name, "name");

    const top = await api.post("/api/templates", { name: "Mine", content: "top {:x:}", variables: [{ name: "x", type: "string" }] });
    t.equal(top.status, 201, top.text);
    t.equal(top.body.template.project_id, null);
    t.same((await api.get("/api/templates")).body.data.map((d: { name: string }) => d.name), ["Mine"]);
    const put = await api.put(`/api/templates/${top.body.template.id}`, { files: [{ file_name: "a.txt", content: "a" }] });
    t.equal(put.status, 200, put.text);
    t.equal(put.body.template.files.length, 1);
    t.equal(put.body.template.variables.length, 1, "variables left out stay");

    const viaProject = await api.get(`${base}/${top.body.template.id}`);
    t.equal(viaProject.status, 200, "readable through any of the owner's projects");
    t.equal((await api.put(`${base}/${top.body.template.id}`, { name: "no" })).status, 403, "edited only through /templates");
    const imported = await api.post(`${base}/${top.body.template.id}/duplicate`, {});
    t.equal(imported.status, 201);
    t.equal(imported.body.template.project_id, project);
    t.equal(imported.body.template.name, "Mine", "a copy of a top-level template keeps its name");

    const other = await buildUserWithToken(app.pool);
    const stranger = client(app.url, other.token);
    t.equal((await stranger.get(`/api/templates/${top.body.template.id}`)).status, 404);
    const strangerProject = await buildProject(app.pool, other.user.id);
    t.equal((await stranger.get(`/api/projects/${strangerProject}/templates/${top.body.template.id}`)).status, 404, "not usable in other people's projects");
    t.equal((await api.delete(`/api/templates/${top.body.template.id}`)).status, 200);
  });

  t.test("project bundles carry templates, variables, files and values (schema ids mapped)", async (t) => {
    const source = await buildProject(app.pool, user.id);
    const schema = await buildSchema(app.pool, source, user.id);
    const id = await buildTemplate(app.pool, { projectId: source }, user.id, {
      variables: [{ name: "schema", type: "schema" }, { name: "name", type: "string" }],
    });
    await api.put(`/api/projects/${source}/templates/${id}/values`, { schema, name: "Bob" });
    const exported = await api.get(`/api/projects/${source}/export`);
    t.equal(exported.status, 200, exported.text);
    t.equal(exported.body.sections.templates.length, 1);
    const imported = await api.post("/api/projects/import", exported.body);
    t.equal(imported.status, 201, imported.text);
    const newProject = imported.body.project.id as number;
    t.equal(imported.body.project.templates_count, 1);
    const list = await api.get(`/api/projects/${newProject}/templates`);
    const copy = await api.get(`/api/projects/${newProject}/templates/${list.body.data[0].id}`);
    t.same(copy.body.template.files.map((f: { file_name: string }) => f.file_name), ["hello/{:name|kebab:}.txt"]);
    const values = await api.get(`/api/projects/${newProject}/templates/${list.body.data[0].id}/values`);
    t.equal(values.body.values.name, "Bob");
    if (exported.body.sections.schemas) {
      const schemas = await api.get(`/api/projects/${newProject}/schemas`);
      t.equal(values.body.values.schema, schemas.body.data[0].id, "the schema id points at the imported schema");
    }
  });
});
