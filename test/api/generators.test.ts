/**
 * A generator is part of its project: while the project is locked (423), its subscription
 * expired (402) or it is archived (409), the generator is neither changed, deleted nor run,
 * and nothing is written; once the project accepts changes again, all three work. A deleted
 * project's generators are gone with it, and a run whose generator is deleted before it records
 * anything fails as gone.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../shared/db/pool.ts";
import { startTestApp } from "../support/app.ts";
import { buildProject, buildUserWithToken } from "../support/factories.ts";
import { client } from "../support/http.ts";
import { buildGenerator, buildTemplate } from "../support/templateFactories.ts";
import { until } from "../support/wait.ts";

t.test("a locked, expired or archived project refuses changes to its generators and runs of them", async (t) => {
  const app = await startTestApp(t, { worker: true });
  // The owner holds the admin role: the spec lets only such an owner update and delete a generator.
  const { user, token } = await buildUserWithToken(app.pool, { roles: ["admin"] });
  const api = client(app.url, token);
  const project = await buildProject(app.pool, user.id);
  const template = await buildTemplate(app.pool, { projectId: project }, user.id);
  const generator = await buildGenerator(app.pool, { userId: user.id, projectId: project, templateIds: [template], status: "Published", values: { name: "x" } });
  const row = () =>
    app.pool.maybeOne(sql.type(z.object({ description: z.string() }))`select description from generators where id = ${generator}`);
  const generations = () => app.pool.oneFirst(sql.type(z.object({ count: z.number() }))`select count(*)::int as count from code_generations`);
  const expiry = (interval: string) =>
    app.pool.query(sql.type(z.object({}))`update subscriptions set expires_at = now() + ${interval}::interval where project_id = ${project}`);

  const states: [string, number, string, () => Promise<unknown>, () => Promise<unknown>][] = [
    ["locked", 423, "project_locked", () => api.post(`/api/projects/${project}/lock`), () => api.post(`/api/projects/${project}/unlock`)],
    ["expired", 402, "subscription_expired", () => expiry("-1 day"), () => expiry("30 days")],
    ["archived", 409, "project_archived", () => api.post(`/api/projects/${project}/archive`), () => api.post(`/api/projects/${project}/unarchive`)],
  ];
  for (const [state, status, code, enter, leave] of states) {
    await enter();
    const refusals = [
      await api.put(`/api/generators/${generator}`, { description: `changed while ${state}` }),
      await api.delete(`/api/generators/${generator}`),
      await api.post(`/api/generators/${generator}/execute`, {}),
    ];
    for (const [i, res] of refusals.entries()) {
      t.equal(res.status, status, `${state}: ${["update", "delete", "run"][i]} refused`);
      t.equal(res.body.code, code);
    }
    t.same(await row(), { description: "" }, `${state}: the generator is unchanged and still there`);
    t.equal(await generations(), 0, `${state}: nothing generated`);
    t.equal((await api.get(`/api/generators/${generator}`)).status, 200, `${state}: still readable`);
    await leave();
  }

  t.equal((await api.put(`/api/generators/${generator}`, { description: "changed" })).status, 200);
  t.same(await row(), { description: "changed" });
  const run = await api.post(`/api/generators/${generator}/execute`, {});
  t.equal(run.status, 200, run.text);
  t.equal(await generations(), 1);
  t.equal((await api.delete(`/api/generators/${generator}`)).status, 200);
  t.equal(await row(), null);
});

t.test("a deleted project takes its generators with it: gone from the list and from every read", async (t) => {
  const app = await startTestApp(t);
  const { user, token } = await buildUserWithToken(app.pool, { roles: ["admin"] });
  const api = client(app.url, token);
  const kept = await buildProject(app.pool, user.id);
  const deleted = await buildProject(app.pool, user.id);
  const keptGenerator = await buildGenerator(app.pool, { userId: user.id, projectId: kept, templateIds: [await buildTemplate(app.pool, { projectId: kept }, user.id)] });
  const gone = await buildGenerator(app.pool, { userId: user.id, projectId: deleted, templateIds: [await buildTemplate(app.pool, { projectId: deleted }, user.id)] });
  t.equal((await api.get("/api/generators")).body.meta.total, 2);
  t.equal((await api.delete(`/api/projects/${deleted}`)).status, 200);

  const list = await api.get("/api/generators");
  t.same(list.body.data.map((g: { id: number }) => g.id), [keptGenerator], "only the live project's generator is listed");
  t.equal(list.body.meta.total, 1, "and counted");
  for (const [what, res] of [
    ["read", await api.get(`/api/generators/${gone}`)],
    ["update", await api.put(`/api/generators/${gone}`, { description: "x" })],
    ["run", await api.post(`/api/generators/${gone}/execute`, {})],
  ] as const) {
    t.equal(res.status, 404, `${what}: 404`);
    t.equal(res.body.message, "Generator not found.", `${what}: the generator is gone, as its project`);
  }
});

t.test("a generator deleted while its run waits in the queue: the run fails as gone, not as an unexpected error", async (t) => {
  const app = await startTestApp(t);
  const { user, token } = await buildUserWithToken(app.pool, { roles: ["admin"] });
  const api = client(app.url, token);
  const project = await buildProject(app.pool, user.id);
  const template = await buildTemplate(app.pool, { projectId: project }, user.id);
  const generator = await buildGenerator(app.pool, { userId: user.id, projectId: project, templateIds: [template], values: { name: "x" } });
  const queued = await api.post(`/api/generators/${generator}/execute`, {}, { headers: { prefer: "respond-async" } });
  t.equal(queued.status, 202, queued.text);
  t.equal((await api.delete(`/api/generators/${generator}`)).status, 200);
  await startTestApp(t, { db: app.db, worker: true });
  const job = await until(async () => {
    const body = (await api.get(`/api/jobs/${queued.body.job.id}`)).body?.job;
    return ["succeeded", "failed"].includes(body?.status) ? body : undefined;
  }, { message: "the run" });
  t.match(job, { status: "failed", error_code: "not_found", attempts: 1 }, "one attempt, answered as a missing generator");
  t.equal(await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from code_generations`), 0, "nothing recorded");
});
