/**
 * The deployment guards, through HTTP and without a worker (an executed deployment stays
 * queued): one deployment per environment (execute, retry, rollback, racing executes, deleting the
 * environment), a deleted environment, rollback targets, and a locked (423), expired (402)
 * or archived (409) project on the deployment, environment, webhook and test-connection
 * routes. Every refusal is checked to have written nothing.
 */
import t from "tap";
import { z } from "zod";
import { sql, type DatabasePool } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildEnvironment, buildGeneration } from "../../support/deploymentFactories.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";

const ftpConfig = { host: "ftp.example.com", port: 21, username: "deployer", password: "Ftp-Secret-0123456", remote_path: "/www" };
const anyRows = z.object({ rows: z.unknown() });

/** Everything the guarded routes could write for `projectId`, as one comparable value. */
async function snapshot(pool: DatabasePool, projectId: number): Promise<unknown> {
  return pool.oneFirst(sql.type(anyRows)`
    select json_build_object(
      'deployments', (select coalesce(json_agg(d order by d.id), '[]') from deployments d where d.project_id = ${projectId}),
      'environments', (select coalesce(json_agg(e order by e.id), '[]') from environments e where e.project_id = ${projectId}),
      'webhooks', (select coalesce(json_agg(w order by w.id), '[]') from webhooks w where w.project_id = ${projectId}),
      'jobs', (select count(*) from jobs j where j.project_id = ${projectId})
    ) as rows`);
}

async function setStatus(pool: DatabasePool, id: number, status: string): Promise<void> {
  await pool.query(sql.type(z.object({}))`update deployments set status = ${status}, finished_at = now() where id = ${id}`);
}

t.test("deployment guards", async (t) => {
  const app = await startTestApp(t);
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);

  /** A project with an FTP environment and a code generation. */
  async function workspace(): Promise<{ project: number; env: number; generation: number }> {
    const project = await buildProject(app.pool, user.id);
    const env = await buildEnvironment(app.url, token, project, { ftp_config: ftpConfig });
    return { project, env, generation: await buildGeneration(app.pool, project, user.id) };
  }
  async function create(env: number, generation: number): Promise<number> {
    const res = await api.post("/api/deployments", { environment_id: env, code_generation_id: generation });
    if (res.status !== 201) throw new Error(`deployment not created: ${res.status} ${res.text}`);
    return res.body.deployment.id;
  }

  await t.test("one deployment per environment runs at a time", async (t) => {
    const w = await workspace();
    const first = await create(w.env, w.generation);
    const second = await create(w.env, w.generation);
    const failed = await create(w.env, w.generation);
    await setStatus(app.pool, failed, "failed");
    const older = await create(w.env, w.generation);
    const newer = await create(w.env, w.generation);
    await setStatus(app.pool, older, "succeeded");
    await setStatus(app.pool, newer, "succeeded");
    const queued = await api.post(`/api/deployments/${first}/execute`);
    t.equal(queued.status, 202, queued.text);

    for (const state of ["queued", "running"]) {
      if (state === "running") await app.pool.query(sql.type(z.object({}))`update deployments set status = 'running' where id = ${first}`);
      const before = await snapshot(app.pool, w.project);
      const refusals = {
        execute: await api.post(`/api/deployments/${second}/execute`),
        retry: await api.post(`/api/deployments/${failed}/retry`),
        rollback: await api.post(`/api/deployments/${newer}/rollback`, { rollback_to: older }),
        "delete environment": await api.delete(`/api/environments/${w.env}`),
      };
      for (const [action, res] of Object.entries(refusals)) {
        t.equal(res.status, 409, `${action} while another is ${state}: ${res.text}`);
        t.equal(res.body.code, "deployment_in_progress", action);
        t.type(res.body.message, "string");
      }
      t.same(await snapshot(app.pool, w.project), before, `nothing written while another is ${state}`);
    }

    await setStatus(app.pool, first, "succeeded");
    const freed = await api.post(`/api/deployments/${second}/execute`);
    t.equal(freed.status, 202, `a finished deployment frees the environment: ${freed.text}`);
    t.equal((await api.post(`/api/deployments/${failed}/retry`)).status, 409, "the newly queued one holds it again");
  });

  await t.test("racing executes of one environment queue exactly one", async (t) => {
    const w = await workspace();
    const ids = [await create(w.env, w.generation), await create(w.env, w.generation), await create(w.env, w.generation)];
    const answers = await Promise.all(ids.map((id) => api.post(`/api/deployments/${id}/execute`)));
    t.same(answers.map((res) => res.status).sort(), [202, 409, 409], answers.map((res) => res.text).join("\n"));
    for (const res of answers.filter((r) => r.status === 409)) t.equal(res.body.code, "deployment_in_progress");
    const queued = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      select count(*)::int as n from deployments where environment_id = ${w.env} and job_id is not null`);
    t.equal(queued, 1, "one deployment holds a job");
    const jobs = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from jobs where project_id = ${w.project}`);
    t.equal(jobs, 1, "the refused ones enqueued nothing");
  });

  await t.test("a deployment whose environment was deleted cannot run", async (t) => {
    const w = await workspace();
    const failed = await create(w.env, w.generation);
    const pending = await create(w.env, w.generation);
    await setStatus(app.pool, failed, "failed");
    const deleted = await api.delete(`/api/environments/${w.env}`);
    t.equal(deleted.status, 200, deleted.text);
    const before = await snapshot(app.pool, w.project);
    for (const res of [await api.post(`/api/deployments/${failed}/retry`), await api.post(`/api/deployments/${pending}/execute`)]) {
      t.equal(res.status, 409, res.text);
      t.equal(res.body.code, "environment_deleted");
    }
    t.same(await snapshot(app.pool, w.project), before, "nothing written");
    t.equal((await api.get(`/api/deployments/${failed}`)).body.deployment.status, "failed", "the history stays");
  });

  await t.test("rollback only restores an earlier successful deployment of the same environment", async (t) => {
    const w = await workspace();
    const otherEnv = await buildEnvironment(app.url, token, w.project, { name: "Staging", type: "staging", ftp_config: ftpConfig });
    const elsewhere = await workspace();
    const ok = await create(w.env, w.generation);
    const failed = await create(w.env, w.generation);
    const sibling = await create(otherEnv, w.generation);
    const foreign = await create(elsewhere.env, elsewhere.generation);
    const current = await create(w.env, w.generation);
    for (const id of [ok, sibling, foreign, current]) await setStatus(app.pool, id, "succeeded");
    await setStatus(app.pool, failed, "failed");
    const before = await snapshot(app.pool, w.project);
    const cases: Record<string, number> = { "a failed one": failed, "another environment's": sibling, "another project's": foreign, "itself": current, "a missing one": current + 1000 };
    for (const [name, target] of Object.entries(cases)) {
      const res = await api.post(`/api/deployments/${current}/rollback`, { rollback_to: target });
      t.equal(res.status, 422, `${name}: ${res.text}`);
      t.ok(res.body.errors?.rollback_to, name);
    }
    const notSucceeded = await api.post(`/api/deployments/${failed}/rollback`, { rollback_to: ok });
    t.equal(notSucceeded.status, 409, "a failed deployment is not rolled back");
    t.equal(notSucceeded.body.code, "invalid_deployment_state");
    t.same(await snapshot(app.pool, w.project), before, "nothing written");
    const accepted = await api.post(`/api/deployments/${current}/rollback`, { rollback_to: ok });
    t.equal(accepted.status, 202, `the earlier successful one is accepted: ${accepted.text}`);
    t.match(accepted.body.deployment, { rollback_of: current, rollback_to: ok });
  });

  await t.test("rollback restores only a deployment to the same target: not another method's, not a git commit's", async (t) => {
    const project = await buildProject(app.pool, user.id);
    const generation = await buildGeneration(app.pool, project, user.id);
    const env = await buildEnvironment(app.url, token, project, {
      ftp_config: ftpConfig,
      ssh_config: { host: "ssh.example.com", username: "deployer", auth_method: "password", password: "Ssh-Secret-0123456", remote_path: "/srv/www" },
      git_config: { owner: "acme", repo: "site", branch: "main", access_token: "ghp_Example0123456789" },
    });
    const by = async (method: string) => {
      const res = await api.post("/api/deployments", { environment_id: env, code_generation_id: generation, deployment_method: method });
      if (res.status !== 201) throw new Error(res.text);
      await setStatus(app.pool, res.body.deployment.id, "succeeded");
      return res.body.deployment.id as number;
    };
    const ftp = await by("ftp");
    const ssh = await by("ssh");
    const committed = await api.post(`/api/projects/${project}/git/commit`, { code_generation_id: generation, environment_id: env, branch: "generated", message: "m" });
    t.equal(committed.status, 202, committed.text);
    await setStatus(app.pool, committed.body.deployment.id, "succeeded");
    const current = await by("ftp");
    const before = await snapshot(app.pool, project);
    for (const [name, target] of [["an SSH deployment", ssh], ["a git commit", committed.body.deployment.id]] as const) {
      const res = await api.post(`/api/deployments/${current}/rollback`, { rollback_to: target });
      t.equal(res.status, 422, `${name}: ${res.text}`);
      t.match(res.body.errors?.rollback_to, [/same environment by FTP/], name);
    }
    t.same(await snapshot(app.pool, project), before, "nothing written");
    const accepted = await api.post(`/api/deployments/${current}/rollback`, { rollback_to: ftp });
    t.equal(accepted.status, 202, accepted.text);
  });

  await t.test("only the live deployment is rolled back, not one that a later deployment replaced", async (t) => {
    const w = await workspace();
    const first = await create(w.env, w.generation);
    const second = await create(w.env, w.generation);
    const third = await create(w.env, w.generation);
    for (const id of [first, second, third]) await setStatus(app.pool, id, "succeeded");
    const failedLater = await create(w.env, w.generation);
    await setStatus(app.pool, failedLater, "failed");
    const before = await snapshot(app.pool, w.project);
    const replaced = await api.post(`/api/deployments/${second}/rollback`, { rollback_to: first });
    t.equal(replaced.status, 409, replaced.text);
    t.match(replaced.body, { code: "invalid_deployment_state", message: new RegExp(`deployment #${third} replaced #${second}`) });
    t.same(await snapshot(app.pool, w.project), before, "nothing written");
    const live = await api.post(`/api/deployments/${third}/rollback`, { rollback_to: first });
    t.equal(live.status, 202, `the live one (a later failure changed nothing there): ${live.text}`);
    const rollback = live.body.deployment.id as number;

    // The rollback fails; meanwhile another deployment goes live: retrying the rollback would replace that one.
    await setStatus(app.pool, rollback, "failed");
    const fourth = await create(w.env, w.generation);
    await setStatus(app.pool, fourth, "succeeded");
    const later = await snapshot(app.pool, w.project);
    const retried = await api.post(`/api/deployments/${rollback}/retry`);
    t.equal(retried.status, 409, retried.text);
    t.match(retried.body, { code: "invalid_deployment_state", message: new RegExp(`deployment #${fourth} replaced #${third}`) });
    t.same(await snapshot(app.pool, w.project), later, "nothing written");
  });

  const states = [
    { name: "locked", status: 423, code: "project_locked", apply: (p: number) => api.post(`/api/projects/${p}/lock`) },
    {
      name: "expired",
      status: 402,
      code: "subscription_expired",
      apply: (p: number) => app.pool.query(sql.type(z.object({}))`update subscriptions set expires_at = now() - interval '1 day' where project_id = ${p}`),
    },
    { name: "archived", status: 409, code: "project_archived", apply: (p: number) => api.post(`/api/projects/${p}/archive`) },
  ];
  for (const state of states) {
    await t.test(`a project that is ${state.name} refuses deployment, environment, webhook and connection-test changes`, async (t) => {
      const w = await workspace();
      const pending = await create(w.env, w.generation);
      const failed = await create(w.env, w.generation);
      const older = await create(w.env, w.generation);
      const newer = await create(w.env, w.generation);
      await setStatus(app.pool, failed, "failed");
      await setStatus(app.pool, older, "succeeded");
      await setStatus(app.pool, newer, "succeeded");
      const hook = await api.post(`/api/projects/${w.project}/webhooks`, { event_type: "manual_trigger", target_url: "http://127.0.0.1:9/hook", secret_key: "Webhook-Secret-0123456" });
      t.equal(hook.status, 201, hook.text);
      const hookId = hook.body.webhook.id;
      await state.apply(w.project);
      const before = await snapshot(app.pool, w.project);

      const refusals: Record<string, () => Promise<{ status: number; body: any; text: string }>> = {
        "create deployment": () => api.post("/api/deployments", { environment_id: w.env, code_generation_id: w.generation }),
        execute: () => api.post(`/api/deployments/${pending}/execute`),
        retry: () => api.post(`/api/deployments/${failed}/retry`),
        rollback: () => api.post(`/api/deployments/${newer}/rollback`, { rollback_to: older }),
        "clear logs": () => api.post(`/api/deployments/${failed}/logs/clear`),
        "create environment": () => api.post(`/api/projects/${w.project}/environments`, { name: "More", type: "staging", ftp_config: ftpConfig }),
        "update environment": () => api.put(`/api/environments/${w.env}`, { name: "Renamed" }),
        "delete environment": () => api.delete(`/api/environments/${w.env}`),
        "create webhook": () => api.post(`/api/projects/${w.project}/webhooks`, { event_type: "manual_trigger", target_url: "http://127.0.0.1:9/x", secret_key: "Webhook-Secret-0123456" }),
        "update webhook": () => api.put(`/api/webhooks/${hookId}`, { is_active: false }),
        "trigger webhook": () => api.post(`/api/webhooks/${hookId}/trigger`),
        "delete webhook": () => api.delete(`/api/webhooks/${hookId}`),
        "test a stored environment's connection": () => api.post("/api/deployments/test-connection", { environment_id: w.env }),
      };
      for (const [action, send] of Object.entries(refusals)) {
        const res = await send();
        t.equal(res.status, state.status, `${action}: ${res.text}`);
        t.equal(res.body.code, state.code, action);
      }
      t.same(await snapshot(app.pool, w.project), before, "nothing written");
      t.equal((await api.get(`/api/deployments/${pending}`)).status, 200, "reading stays allowed");
      t.equal((await api.get(`/api/projects/${w.project}/environments`)).status, 200, "listing environments stays allowed");
    });
  }
});
