/**
 * The project-state guards on template routes, through HTTP: a locked project answers 423,
 * an expired subscription 402 and an archived project 409 to every change of a template
 * (CRUD, variables, files, saved values, duplicate, execute, zip import, media, and the
 * caller's top-level templates duplicated or run there), and nothing is written; reads
 * and previews still work. Plus the exemptions: an archived project can be deleted, and a
 * code generation's archive can be deleted while the subscription is expired. An execute
 * queued before the project was locked is dropped by its job.
 */
import { buffer } from "node:stream/consumers";
import t from "tap";
import { z } from "zod";
import { createZipStream } from "../../../shared/archive/zipWriter.ts";
import { sql, type DatabasePool } from "../../../shared/db/pool.ts";
import { awaitJob } from "../../../shared/jobs/await.ts";
import { startTestApp } from "../../support/app.ts";
import { buildProject, buildUserWithToken, lockedOrArchivedRefusals, setProjectState } from "../../support/factories.ts";
import { client, request } from "../../support/http.ts";
import { buildTemplate } from "../../support/templateFactories.ts";

type State = "locked" | "expired" | "archived";

const refusals: Record<State, [number, string]> = {
  locked: [423, "project_locked"],
  expired: [402, "subscription_expired"],
  archived: [409, "project_archived"],
};

async function putInState(pool: DatabasePool, projectId: number, state: State): Promise<void> {
  if (state === "locked") await pool.query(sql.type(z.object({}))`update projects set is_locked = true where id = ${projectId}`);
  if (state === "archived") await pool.query(sql.type(z.object({}))`update projects set archived_at = now() where id = ${projectId}`);
  if (state === "expired") await pool.query(sql.type(z.object({}))`update subscriptions set expires_at = now() - interval '1 day' where project_id = ${projectId}`);
}

/** Every row a template route of project `projectId` could write, as JSON text. */
async function written(pool: DatabasePool, projectId: number): Promise<string> {
  return pool.oneFirst(sql.type(z.object({ rows: z.string() }))`
    select jsonb_build_object(
      'project', (select to_jsonb(p) from projects p where p.id = ${projectId}),
      'templates', (select jsonb_agg(to_jsonb(x) order by x.id) from templates x where x.project_id = ${projectId}),
      'variables', (select jsonb_agg(to_jsonb(v) order by v.id) from template_variables v join templates x on x.id = v.template_id where x.project_id = ${projectId}),
      'media', (select jsonb_agg(to_jsonb(m) order by m.id) from template_media m join templates x on x.id = m.template_id where x.project_id = ${projectId}),
      'files', (select jsonb_agg(to_jsonb(f) order by f.id) from template_files f join templates x on x.id = f.template_id where x.project_id = ${projectId}),
      'values', (select jsonb_agg(to_jsonb(s) order by s.template_id) from template_variable_values s where s.project_id = ${projectId}),
      'generations', (select count(*) from code_generations g where g.project_id = ${projectId}),
      'jobs', (select count(*) from jobs j where j.project_id = ${projectId}),
      'events', (select count(*) from outbox_events e where e.project_id = ${projectId})
    )::text as rows`);
}

t.test("template guards", async (t) => {
  const app = await startTestApp(t, { worker: true });
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);

  for (const state of ["locked", "expired", "archived"] as const) {
    t.test(`${state === "archived" ? "an" : "a"} ${state} project refuses every template change, writes nothing, still reads`, async (t) => {
      const project = await buildProject(app.pool, user.id);
      const base = `/api/projects/${project}/templates`;
      const id = await buildTemplate(app.pool, { projectId: project }, user.id);
      const full = (await api.get(`${base}/${id}`)).body.template;
      const variableId: number = full.variables[0].id;
      const fileId: number = full.files[0].id;
      t.ok(variableId && fileId, "the template has a variable and a file");
      await putInState(app.pool, project, state);
      const before = await written(app.pool, project);

      const changes: ["post" | "put" | "delete", string, unknown][] = [
        ["post", base, { name: "New" }],
        ["put", `${base}/${id}`, { name: "Renamed" }],
        ["delete", `${base}/${id}`, undefined],
        ["post", `${base}/${id}/variables`, { name: "other" }],
        ["put", `${base}/${id}/variables/${variableId}`, { description: "changed" }],
        ["delete", `${base}/${id}/variables/${variableId}`, undefined],
        ["post", `${base}/${id}/files`, { file_name: "other.txt", content: "x" }],
        ["put", `${base}/${id}/files/${fileId}`, { content: "changed" }],
        ["delete", `${base}/${id}/files/${fileId}`, undefined],
        ["put", `${base}/${id}/values`, { name: "saved" }],
        ["post", `${base}/${id}/duplicate`, {}],
        ["post", `${base}/${id}/execute`, { name: "run" }],
      ];
      const [status, code] = refusals[state];
      for (const [method, path, body] of changes) {
        const res = await api[method](path, body);
        t.same([res.status, res.body?.code], [status, code], `${method.toUpperCase()} ${path.slice(base.length) || "/"} → ${status} ${code}: ${res.text}`);
        t.type(res.body?.message, "string", "with a message");
      }
      t.equal(await written(app.pool, project), before, "nothing was written");

      t.equal((await api.get(`${base}/${id}`)).status, 200, "the template is still readable");
      t.equal((await api.get(`${base}/${id}/values`)).status, 200, "saved values are still readable");
      const preview = await api.post(`${base}/${id}/preview`, { name: "peek" });
      t.same([preview.status, preview.body.preview], [200, "Hello peek"], `a preview records nothing, so it still runs: ${preview.text}`);
      t.equal((await written(app.pool, project)).replace(/"jobs": \d+/, ""), before.replace(/"jobs": \d+/, ""), "the preview wrote nothing but its job");
    });
  }

  for (const state of ["locked", "expired", "archived"] as const) {
    t.test(`${state}: zip import, media and the caller's top-level templates are refused too`, async (t) => {
      const project = await buildProject(app.pool, user.id);
      const base = `/api/projects/${project}/templates`;
      const id = await buildTemplate(app.pool, { projectId: project }, user.id);
      const own = await buildTemplate(app.pool, { ownerId: user.id }, user.id, { name: "Mine" });
      const zip = await buffer(createZipStream([{ path: "template.json", content: JSON.stringify({ name: "Zipped", content: "z" }) }]));
      await putInState(app.pool, project, state);
      const before = await written(app.pool, project);
      const ownBefore = (await api.get(`/api/templates/${own}`)).body;

      const form = new FormData();
      form.set("file", new Blob([new Uint8Array(zip)], { type: "application/zip" }), "template.zip");
      const media = new FormData();
      media.set("media_type", "video");
      media.set("video_url", "https://videos.example/1");
      const answers = {
        import: await request(app.url, "POST", `${base}/import`, { token, body: form, raw: true }),
        media: await request(app.url, "POST", `${base}/${id}/media`, { token, body: media, raw: true }),
        "duplicate a top-level template": await api.post(`${base}/${own}/duplicate`, {}),
        "execute a top-level template": await api.post(`${base}/${own}/execute`, { name: "run" }),
        "save values for a top-level template": await api.put(`${base}/${own}/values`, { name: "saved" }),
      };
      const [status, code] = refusals[state];
      for (const [what, res] of Object.entries(answers)) t.same([res.status, res.body?.code], [status, code], `${what} → ${status}: ${res.text}`);
      t.equal(await written(app.pool, project), before, "nothing was written to the project");
      t.same((await api.get(`/api/templates/${own}`)).body, ownBefore, "the top-level template is unchanged");
    });
  }

  t.test("a project in several states answers the first of locked, expired, archived", async (t) => {
    const cases: [State[], State][] = [
      [["locked", "expired", "archived"], "locked"],
      [["expired", "archived"], "expired"],
    ];
    for (const [states, first] of cases) {
      const project = await buildProject(app.pool, user.id);
      const id = await buildTemplate(app.pool, { projectId: project }, user.id);
      for (const state of states) await putInState(app.pool, project, state);
      const res = await api.put(`/api/projects/${project}/templates/${id}`, { name: "x" });
      t.same([res.status, res.body.code], refusals[first], `${states.join(" + ")} → ${first}`);
    }
  });

  t.test("once the state is lifted the same changes go through", async (t) => {
    const project = await buildProject(app.pool, user.id);
    const base = `/api/projects/${project}/templates`;
    const id = await buildTemplate(app.pool, { projectId: project }, user.id);
    await putInState(app.pool, project, "locked");
    t.equal((await api.put(`${base}/${id}`, { name: "Renamed" })).status, 423);
    t.equal((await api.post(`/api/projects/${project}/unlock`)).status, 200);
    const renamed = await api.put(`${base}/${id}`, { name: "Renamed" });
    t.same([renamed.status, renamed.body.template?.name], [200, "Renamed"], renamed.text);
    const saved = await api.put(`${base}/${id}/values`, { name: "saved" });
    t.same([saved.status, saved.body.values], [200, { name: "saved" }], saved.text);
  });

  t.test("an archived project can still be deleted, even with an expired subscription", async (t) => {
    for (const states of [["archived"], ["archived", "expired"]] as State[][]) {
      const project = await buildProject(app.pool, user.id);
      for (const state of states) await putInState(app.pool, project, state);
      const res = await api.delete(`/api/projects/${project}`);
      t.equal(res.status, 200, `${states.join(" + ")}: ${res.text}`);
      const gone = await app.pool.oneFirst(sql.type(z.object({ deleted: z.boolean() }))`select deleted_at is not null as deleted from projects where id = ${project}`);
      t.equal(gone, true, "the project is (soft) deleted");
      t.equal((await api.get(`/api/projects/${project}`)).status, 404);
    }
  });

  t.test("a code generation's archive can be deleted while the subscription is expired", async (t) => {
    const project = await buildProject(app.pool, user.id);
    const id = await buildTemplate(app.pool, { projectId: project }, user.id);
    const run = await api.post(`/api/projects/${project}/templates/${id}/execute`, { name: "ok" });
    t.equal(run.status, 200, run.text);
    const generation = await app.pool.oneFirst(sql.type(z.object({ id: z.number() }))`select id from code_generations where project_id = ${project} order by id desc limit 1`);
    await putInState(app.pool, project, "expired");
    t.equal((await api.put(`/api/projects/${project}/templates/${id}`, { name: "x" })).status, 402, "the project is soft-locked");
    const res = await api.delete(`/api/archives/${generation}`);
    t.equal(res.status, 200, res.text);
    const archive = await app.pool.one(sql.type(z.object({ deleted: z.boolean() }))`
      select deleted_at is not null as deleted from project_archives where code_generation_id = ${generation}`);
    t.equal(archive.deleted, true, "the archive is marked deleted");
  });

  t.test("a code generation's archive is kept while the project is locked (423) or archived (409)", async (t) => {
    const project = await buildProject(app.pool, user.id);
    const id = await buildTemplate(app.pool, { projectId: project }, user.id);
    t.equal((await api.post(`/api/projects/${project}/templates/${id}/execute`, { name: "ok" })).status, 200);
    const generation = await app.pool.oneFirst(sql.type(z.object({ id: z.number() }))`select id from code_generations where project_id = ${project} order by id desc limit 1`);
    for (const { state, status, code } of lockedOrArchivedRefusals) {
      await setProjectState(app.pool, project, state);
      const res = await api.delete(`/api/archives/${generation}`);
      t.match({ status: res.status, code: res.body?.code }, { status, code }, state);
    }
    const kept = await app.pool.oneFirst(sql.type(z.object({ deleted: z.boolean() }))`
      select bool_or(deleted_at is not null) as deleted from project_archives where code_generation_id = ${generation}`);
    t.equal(kept, false, "the archive is not marked deleted");
  });
});

t.test("an execute queued before the project was locked is dropped by its job, recording nothing", async (t) => {
  const web = await startTestApp(t);
  const { user, token } = await buildUserWithToken(web.pool);
  const api = client(web.url, token);
  const project = await buildProject(web.pool, user.id);
  const id = await buildTemplate(web.pool, { projectId: project }, user.id);
  const queued = await api.post(`/api/projects/${project}/templates/${id}/execute`, { name: "late" }, { headers: { prefer: "respond-async" } });
  t.equal(queued.status, 202, queued.text);
  t.equal((await api.post(`/api/projects/${project}/lock`)).status, 200);

  const worker = await startTestApp(t, { db: web.db, worker: true });
  const job = await awaitJob(worker.pool, worker.deps.hub, queued.body.job.id, 60_000);
  t.same([job.status, job.error_code], ["failed", "project_locked"], JSON.stringify(job));
  const generations = await web.pool.oneFirst(sql.type(z.object({ count: z.number() }))`select count(*)::int as count from code_generations where project_id = ${project}`);
  t.equal(generations, 0, "no code generation was recorded");
});
