/**
 * A deleted project's scheduled webhooks stop: the project is gone for every read, and its
 * webhooks must not keep telling a receiver about it on every matching tick. A live
 * project's webhook with the same schedule is delivered by the same tick.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
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
