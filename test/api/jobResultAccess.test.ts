/**
 * The result of a project's job is project content: a member who ran a template and then left
 * the project's team keeps the job record (status, times) but no longer reads the generated
 * files through GET /jobs/{id}, GET /jobs or the job's realtime channel, whose `JobCompleted`
 * carries them. A site administrator still reads them; jobs outside projects are unaffected.
 */
import t from "tap";
import { startTestApp } from "../support/app.ts";
import { buildProject, buildTeam, buildUserWithToken } from "../support/factories.ts";
import { client } from "../support/http.ts";
import { buildTemplate } from "../support/templateFactories.ts";
import { until } from "../support/wait.ts";

const later = { headers: { prefer: "respond-async" } };

t.test("a job's result is read only while its project is", async (t) => {
  const app = await startTestApp(t, { worker: true });
  const owner = await buildUserWithToken(app.pool);
  const member = await buildUserWithToken(app.pool);
  const admin = await buildUserWithToken(app.pool, { roles: ["admin"] });
  const project = await buildProject(app.pool, owner.user.id);
  const team = await buildTeam(app.pool, owner.user.id, { [member.user.id]: 3 }, [project]);
  const template = await buildTemplate(app.pool, { projectId: project }, owner.user.id);
  const api = client(app.url, member.token);

  const started = await api.post(`/api/projects/${project}/templates/${template}/execute`, { name: "Ada" }, later);
  t.equal(started.status, 202, started.text);
  const id = started.body.job.id as number;
  const done = await until(async () => {
    const job = (await api.get(`/api/jobs/${id}`)).body.job;
    return job.status === "queued" || job.status === "running" ? null : job;
  }, { timeoutMs: 60_000, message: "the template run to finish" });
  t.equal(done.status, "succeeded");
  t.ok(Object.keys(done.result.files).length > 0, "a member reads the generated files");
  const parsed = await api.post("/api/sql-parse", { sql_text: "CREATE TABLE kept (id int);", database_type: "MySQL" });
  t.equal(parsed.status, 200, parsed.text);
  const channel = () => api.post("/api/broadcasting/auth", { socket_id: "123.456", channel_name: `private-job.${id}` });
  t.equal((await channel()).status, 200, "and may follow the job");

  const left = await api.delete(`/api/teams/${team}/members/${member.user.id}`);
  t.equal(left.status, 200, left.text);

  const shown = await api.get(`/api/jobs/${id}`);
  t.equal(shown.status, 200, "the record stays its owner's");
  t.match(shown.body.job, { id, kind: "templates__execute", status: "succeeded", result: null });
  const listed = (await api.get("/api/jobs")).body.data as { id: number; kind: string; result: unknown }[];
  t.match(listed.find((j) => j.id === id), { status: "succeeded", result: null }, "listed without its result");
  t.match(listed.find((j) => j.kind === "schemas__parse"), { status: "succeeded", result: { tables_count: 1 } }, "a job outside any project keeps its result");
  const refused = await channel();
  t.equal(refused.status, 403, "its channel, which carries the result, is refused");
  t.equal(refused.body.code, "forbidden");

  const byAdmin = await client(app.url, admin.token).get(`/api/jobs/${id}`);
  t.ok(Object.keys(byAdmin.body.job.result.files).length > 0, "a site administrator still reads it");
  t.equal((await client(app.url, owner.token).get(`/api/jobs/${id}`)).status, 404, "the project's owner does not see another's job");

  // Back in the team, the result is readable again: nothing was deleted.
  await buildTeam(app.pool, owner.user.id, { [member.user.id]: 4 }, [project]);
  t.ok(Object.keys((await api.get(`/api/jobs/${id}`)).body.job.result.files).length > 0, "a viewer of the project reads it");
});
