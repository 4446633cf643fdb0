/**
 * A deleted project's webhooks stop: the project is gone for every read, and its webhooks
 * must not keep telling a receiver about it. Scheduled ones are not delivered on a matching
 * tick; deliveries already queued when it is deleted are cancelled (recorded as failed with
 * the reason, their jobs cancelled), and one that a worker starts after the deletion anyway,
 * or that an unprocessed CodeGenerated event would create, is not sent either. A live
 * project's webhook is delivered all the while.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { PROJECT_DELETED } from "../../../shared/webhooks/projectDeleted.ts";
import { startTestApp } from "../../support/app.ts";
import { buildGeneration } from "../../support/deploymentFactories.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { startWebhookReceiver } from "../../support/webhookReceiver.ts";
import { until } from "../../support/wait.ts";

const secret = "whsec-Receiver-Shared-Secret-0123";

t.test("a deleted project's scheduled webhook is not delivered", async (t) => {
  const app = await startTestApp(t, { worker: true });
  const receiver = await startWebhookReceiver(t);
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const scheduled = async (project: number) => {
    const res = await api.post(`/api/projects/${project}/webhooks`, { event_type: "scheduled", target_url: receiver.url, secret_key: secret, cron: "30 9 * * 1" });
    if (res.status !== 201) throw new Error(res.text);
    return res.body.webhook.id as number;
  };
  const live = await buildProject(app.pool, user.id);
  const deleted = await buildProject(app.pool, user.id);
  const liveHook = await scheduled(live);
  const deletedHook = await scheduled(deleted);
  t.equal((await api.delete(`/api/projects/${deleted}`)).status, 200);

  await app.pool.query(sql.type(z.object({}))`
    select graphile_worker.add_job('webhooks__schedule', json_build_object('_cron', json_build_object('ts', '2024-01-08T09:30:00Z'::text)))`);
  const deliveries = (webhook: number) =>
    app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from webhook_deliveries where webhook_id = ${webhook}`);
  await until(async () => (await deliveries(liveHook)) === 1, { message: "the live project's delivery" });
  await receiver.waitFor(1);
  t.equal(await deliveries(deletedHook), 0, "none for the deleted project");
  t.same(
    receiver.received.map((hook) => (JSON.parse(hook.body) as { project_id: number }).project_id),
    [live],
    "the receiver heard of the live project only",
  );
});

t.test("deliveries queued when the project is deleted are cancelled and recorded, not sent", async (t) => {
  // Everything is queued while no worker runs; the worker starts once the projects are deleted.
  const app = await startTestApp(t);
  const receiver = await startWebhookReceiver(t);
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const hook = async (project: number, event_type: string) => {
    const res = await api.post(`/api/projects/${project}/webhooks`, { event_type, target_url: receiver.url, secret_key: secret });
    if (res.status !== 201) throw new Error(res.text);
    return res.body.webhook.id as number;
  };
  const trigger = async (webhook: number) => {
    const res = await api.post(`/api/webhooks/${webhook}/trigger`, {});
    if (res.status !== 202) throw new Error(res.text);
  };
  const live = await buildProject(app.pool, user.id);
  const deleted = await buildProject(app.pool, user.id);
  const raced = await buildProject(app.pool, user.id);
  const liveHook = await hook(live, "manual_trigger");
  const deletedHook = await hook(deleted, "manual_trigger");
  const generatedHook = await hook(deleted, "code_generated");
  const racedHook = await hook(raced, "manual_trigger");
  await trigger(liveHook);
  await trigger(deletedHook);
  await trigger(racedHook);
  await buildGeneration(app.pool, deleted, user.id, { "a.txt": "a" }, { withEvent: true });

  t.equal((await api.delete(`/api/projects/${deleted}`)).status, 200);
  // A deletion the route's cancellation did not see (a worker held the job already): the attempt skips it.
  await app.pool.query(sql.type(z.object({}))`update projects set deleted_at = now() where id = ${raced}`);

  const rows = sql.type(z.object({ webhook_id: z.number(), status: z.string(), error: z.string().nullable(), attempts: z.number(), job_status: z.string().nullable() }));
  const deliveries = () =>
    app.pool.any(rows`select d.webhook_id, d.status, d.error, d.attempts, j.status as job_status
      from webhook_deliveries d left join jobs j on j.id = d.job_id order by d.id`);
  t.match(await deliveries(), [
    { webhook_id: liveHook, status: "pending" },
    { webhook_id: deletedHook, status: "failed", error: PROJECT_DELETED, attempts: 0, job_status: "cancelled" },
    { webhook_id: racedHook, status: "pending" },
  ], "the deletion cancelled its project's queued delivery");

  await startTestApp(t, { db: app.db, worker: true });
  await receiver.waitFor(1);
  await until(
    async () =>
      (await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
        select count(*)::int as n from graphile_worker.jobs where task_identifier like 'webhooks__%'`)) === 0,
    { message: "the webhook jobs to finish" },
  );
  const after = await deliveries();
  t.match(after, [
    { webhook_id: liveHook, status: "succeeded" },
    { webhook_id: deletedHook, status: "failed", error: PROJECT_DELETED },
    { webhook_id: racedHook, status: "failed", error: PROJECT_DELETED, attempts: 0, job_status: "failed" },
  ]);
  t.notOk(after.some((d) => d.webhook_id === generatedHook), "the deleted project's code generation was not announced");
  t.same(
    receiver.received.map((received) => (JSON.parse(received.body) as { project_id: number }).project_id),
    [live],
    "the receiver heard of the live project only",
  );
  const failures = await app.pool.any(sql.type(z.object({ consecutive_failures: z.number(), is_active: z.boolean() }))`
    select consecutive_failures, is_active from webhooks where id in (${deletedHook}, ${racedHook})`);
  t.same(failures, [{ consecutive_failures: 0, is_active: true }, { consecutive_failures: 0, is_active: true }], "not counted against the webhooks");
});
