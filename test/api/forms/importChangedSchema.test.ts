/**
 * A project whose schema changed after its forms and reports were made: the re-parse drops a
 * table a report is bound to and a field a form lists. The project keeps them as they were
 * written, and its export must import again (POST /projects/import), giving the same forms
 * and reports: a bundle the service itself wrote was refused with 422 on the report's table.
 */
import t from "tap";
import { startTestApp } from "../../support/app.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";

const before = `
CREATE TABLE users (id SERIAL PRIMARY KEY, email VARCHAR(255) NOT NULL, nickname TEXT);
CREATE TABLE posts (id SERIAL PRIMARY KEY, user_id INTEGER NOT NULL, title VARCHAR(200) NOT NULL);`;
const after = "CREATE TABLE users (id SERIAL PRIMARY KEY, email VARCHAR(255) NOT NULL);";

t.test("a project whose schema lost a bound table and a listed field exports a bundle its import takes", async (t) => {
  const app = await startTestApp(t, { worker: true });
  const owner = await buildUserWithToken(app.pool);
  const api = client(app.url, owner.token);
  const projectId = await buildProject(app.pool, owner.user.id);
  const base = `/api/projects/${projectId}`;
  const schema = await api.post(`${base}/schemas`, { name: "blog", sql_text: before, database_type: "PostgreSQL" });
  t.equal(schema.status, 201, schema.text);
  const schemaId = schema.body.schema.id as number;

  const form = (await api.post(`${base}/forms`, { name: "Users", schema_id: schemaId, table_name: "users" })).body.form;
  for (const field_name of ["email", "nickname"]) t.equal((await api.post(`${base}/forms/${form.id}/fields`, { field_name })).status, 201);
  const placed = await api.put(`${base}/forms/${form.id}/layout`, {
    width: 400, height: 300,
    items: [{ field_name: "email", x: 0, y: 0, width: 200, height: 24 }, { field_name: "nickname", x: 0, y: 30, width: 200, height: 24 }],
  });
  t.equal(placed.status, 200, placed.text);
  const report = (await api.post(`${base}/reports`, { name: "Posts", schema_id: schemaId, table_name: "posts" })).body.report;
  const pattern = await api.put(`${base}/reports/${report.id}/pattern`, { group_by: ["user_id"], sort_by: [{ field_name: "title", direction: "asc" }] });
  t.equal(pattern.status, 200, pattern.text);

  const reparsed = await api.put(`${base}/schemas/${schemaId}`, { sql_text: after });
  t.equal(reparsed.status, 200, reparsed.text);
  const forms = (await api.get(`${base}/forms`)).body.data;
  const reports = (await api.get(`${base}/reports`)).body.data;
  t.match(forms, [{ table_name: "users", fields: [{ field_name: "email" }, { field_name: "nickname" }] }], "the project keeps its form as written");
  t.match(reports, [{ table_name: "posts", pattern: { group_by: ["user_id"] } }], "and its report");

  const bundle = (await api.get(`${base}/export`)).body;
  const checked = await api.post("/api/projects/import/validate", bundle);
  t.match(checked.body, { valid: true }, checked.text);
  const imported = await api.post("/api/projects/import", bundle);
  t.equal(imported.status, 201, imported.text);
  const copy = imported.body.project.id as number;
  type Doc = { name: string; table_name: string; layout: unknown; pattern?: unknown; fields?: { field_name: string; label: string }[] };
  const strip = (rows: Doc[]) =>
    rows.map((r) => ({ name: r.name, table_name: r.table_name, layout: r.layout, pattern: r.pattern, fields: r.fields?.map((f) => [f.field_name, f.label]) }));
  t.same(strip((await api.get(`/api/projects/${copy}/forms`)).body.data), strip(forms), "the same forms");
  t.same(strip((await api.get(`/api/projects/${copy}/reports`)).body.data), strip(reports), "the same reports");
});
