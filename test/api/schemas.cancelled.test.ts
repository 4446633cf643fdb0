/**
 * Parse jobs cancelled before they ran (POST /jobs/{id}/cancel; no worker here, so jobs stay
 * queued): what they were to parse goes as if it had failed to parse. A new schema leaves no
 * row (it used to stay `parsing` for good, hidden from every read), an update leaves the
 * schema as it was and no revision waiting, a stand-alone parse leaves nothing stored.
 */
import t, { type Test } from "tap";
import { z } from "zod";
import { sql } from "../../shared/db/pool.ts";
import { startTestApp } from "../support/app.ts";
import { buildProject, buildUserWithToken } from "../support/factories.ts";
import { client } from "../support/http.ts";
import { buildSchema } from "../support/templateFactories.ts";

const later = { headers: { prefer: "respond-async" } };
const count = z.object({ n: z.number() });

t.test("a cancelled parse job leaves no schema half made", async (t) => {
  const app = await startTestApp(t);
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = await buildProject(app.pool, user.id);
  const base = `/api/projects/${project}/schemas`;
  const cancel = async (t: Test, jobId: number) => {
    const res = await api.post(`/api/jobs/${jobId}/cancel`);
    t.equal(res.status, 200, res.text);
    t.equal(res.body.job.status, "cancelled");
  };

  t.test("a create: no schema row and no revision stay behind", async (t) => {
    const res = await api.post(base, { name: "Never parsed", sql_text: "CREATE TABLE a (id int PRIMARY KEY);", database_type: "PostgreSQL" }, later);
    t.equal(res.status, 202, res.text);
    await cancel(t, res.body.job.id);
    t.equal(await app.pool.oneFirst(sql.type(count)`select count(*)::int as n from schemas where project_id = ${project}`), 0, "no schema, not even a hidden one");
    t.equal(await app.pool.oneFirst(sql.type(count)`select count(*)::int as n from schema_revisions`), 0, "no revision waiting");
    t.equal((await api.get(`/api/projects/${project}`)).body.project.schemas_count, 0);
  });

  t.test("an update: the schema keeps its text and parse, and no revision waits", async (t) => {
    const schema = await buildSchema(app.pool, project, user.id);
    const before = (await api.get(`${base}/${schema}`)).body.schema;
    const res = await api.put(`${base}/${schema}`, { sql_text: "CREATE TABLE replaced (id int PRIMARY KEY);" }, later);
    t.equal(res.status, 202, res.text);
    await cancel(t, res.body.job.id);
    t.equal(await app.pool.oneFirst(sql.type(count)`select count(*)::int as n from schema_revisions where schema_id = ${schema}`), 0);
    const after = await api.get(`${base}/${schema}`);
    t.equal(after.status, 200);
    t.same(after.body.schema, before, "the schema as it was");
    const rename = await api.put(`${base}/${schema}`, { name: "renamed" });
    t.equal(rename.status, 200, "and it takes changes as before");
  });

  t.test("a stand-alone parse: nothing stored", async (t) => {
    const res = await api.post("/api/sql-parse", { sql_text: "CREATE TABLE b (id int);", database_type: "MySQL" }, later);
    t.equal(res.status, 202, res.text);
    await cancel(t, res.body.job.id);
    t.equal(await app.pool.oneFirst(sql.type(count)`select count(*)::int as n from sql_parses where user_id = ${user.id}`), 0);
  });
});
