/**
 * A project's job's error and progress messages are project content like its result: a
 * template error quotes template text and names the file, progress names files. A member
 * who left the project's team keeps the record (status, error code, times) but no longer
 * reads them through GET /jobs/{id}, GET /jobs, POST /jobs/{id}/cancel or the job's channel.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../shared/db/pool.ts";
import { startTestApp } from "../support/app.ts";
import { buildProject, buildTeam, buildUserWithToken } from "../support/factories.ts";
import { client } from "../support/http.ts";
import { buildTemplate } from "../support/templateFactories.ts";
import { until } from "../support/wait.ts";

const later = { headers: { prefer: "respond-async" } };

t.test("a project's job's error and progress messages are read only while its project is", async (t) => {
  const app = await startTestApp(t, { worker: true });
  const owner = await buildUserWithToken(app.pool);
  const member = await buildUserWithToken(app.pool);
  const admin = await buildUserWithToken(app.pool, { roles: ["admin"] });
  const project = await buildProject(app.pool, owner.user.id);
  const team = await buildTeam(app.pool, owner.user.id, { [member.user.id]: 3 }, [project]);
  const template = await buildTemplate(app.pool, { projectId: project }, owner.user.id, {
    content: "Plans",
    variables: [],
    files: [{ file_name: "secret-plans/launch.txt", content: "Launch on {:codename_of_launch:}" }],
  });
  const api = client(app.url, member.token);

  const started = await api.post(`/api/projects/${project}/templates/${template}/execute`, {}, later);
  t.equal(started.status, 202, started.text);
  const id = started.body.job.id as number;
  const failed = await until(async () => {
    const job = (await api.get(`/api/jobs/${id}`)).body.job;
    return job.status === "queued" || job.status === "running" ? null : job;
  }, { timeoutMs: 60_000, message: "the template run to fail" });
  t.equal(failed.status, "failed");
  t.match(failed.error, /codename_of_launch|secret-plans/, "the error quotes the template");
  // What a task reporting its progress leaves on the record (no message survives a finished
  // run of the built-in tasks, so it is written here as markProgress writes it).
  await app.pool.query(sql.type(z.object({}))`update jobs set progress_message = 'Rendering secret-plans/launch.txt' where id = ${id}`);
  // A queued job of the project with a failed attempt's error, to cancel after leaving.
  const queued = await app.pool.oneFirst(sql.type(z.object({ id: z.number() }))`
    insert into jobs (kind, status, max_attempts, user_id, project_id, error, error_code, progress_message)
    values ('templates__execute', 'queued', 3, ${member.user.id}, ${project}, 'secret-plans/launch.txt: unknown value', 'template_error', 'Rendering secret-plans/launch.txt')
    returning id`);
  t.match((await api.get(`/api/jobs/${id}`)).body.job, { progress_message: "Rendering secret-plans/launch.txt" }, "a member reads the progress message");

  const left = await api.delete(`/api/teams/${team}/members/${member.user.id}`);
  t.equal(left.status, 200, left.text);

  const hidden = { id, status: "failed", error_code: failed.error_code, error: null, errors: null, progress_message: null, result: null };
  const shown = await api.get(`/api/jobs/${id}`);
  t.equal(shown.status, 200, "the record stays its owner's");
  t.match(shown.body.job, hidden, "GET /jobs/{id} hides the error and progress messages");
  t.notMatch(shown.text, /secret-plans|codename_of_launch/);
  const listed = await api.get("/api/jobs");
  t.match((listed.body.data as { id: number }[]).find((j) => j.id === id), hidden, "GET /jobs hides them");
  t.notMatch(listed.text, /secret-plans|codename_of_launch/);
  const channel = await api.post("/api/broadcasting/auth", { socket_id: "123.456", channel_name: `private-job.${id}` });
  t.equal(channel.status, 403, "its channel, whose events carry them, is refused");
  const cancelled = await api.post(`/api/jobs/${queued}/cancel`, {});
  t.equal(cancelled.status, 200, cancelled.text);
  t.match(cancelled.body.job, { id: queued, status: "cancelled", error: null, progress_message: null }, "cancelling answers without them");
  t.notMatch(cancelled.text, /secret-plans/);

  const byAdmin = (await client(app.url, admin.token).get(`/api/jobs/${id}`)).body.job;
  t.match(byAdmin, { error: failed.error, progress_message: "Rendering secret-plans/launch.txt" }, "a site administrator still reads them");

  await buildTeam(app.pool, owner.user.id, { [member.user.id]: 4 }, [project]);
  t.match((await api.get(`/api/jobs/${id}`)).body.job, { error: failed.error, progress_message: "Rendering secret-plans/launch.txt" }, "back in the team, they are readable again");
});
