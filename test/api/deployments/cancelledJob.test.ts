/**
 * Records whose job was cancelled before it ran (POST /jobs/{id}/cancel, no worker here so
 * jobs stay queued): a deployment must not stay "queued" for good, holding its environment
 * against every later deployment, nor a webhook delivery "pending".
 */
import t from "tap";
import { startTestApp } from "../../support/app.ts";
import { buildEnvironment, buildGeneration } from "../../support/deploymentFactories.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";

const ftpConfig = { host: "ftp.example.com", port: 21, username: "deployer", password: "Ftp-Secret-0123456", remote_path: "/www" };

t.test("a cancelled job settles the record it was queued for", async (t) => {
  const app = await startTestApp(t);
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = await buildProject(app.pool, user.id);
  const env = await buildEnvironment(app.url, token, project, { ftp_config: ftpConfig });
  const generation = await buildGeneration(app.pool, project, user.id);
  const create = async () => (await api.post("/api/deployments", { environment_id: env, code_generation_id: generation })).body.deployment.id as number;

  // A deployment: failed, its environment free.
  const first = await create();
  const executed = await api.post(`/api/deployments/${first}/execute`);
  t.equal(executed.status, 202);
  const cancelled = await api.post(`/api/jobs/${executed.body.job.id}/cancel`);
  t.equal(cancelled.status, 200);

  const after = (await api.get(`/api/deployments/${first}`)).body.deployment;
  t.equal(after.status, "failed", "the deployment says it did not run");
  t.equal(after.error_code, "job_cancelled");
  const second = await create();
  const next = await api.post(`/api/deployments/${second}/execute`);
  t.equal(next.status, 202, next.text);
  t.equal((await api.post(`/api/deployments/${first}/retry`)).status, 409, "one at a time still holds: the new one is queued");

  t.test("cancelling a webhook delivery's job fails the delivery, not the webhook", async (t) => {
    const hook = await api.post(`/api/projects/${project}/webhooks`, { event_type: "manual_trigger", target_url: "https://hooks.example.com/in", secret_key: "a-webhook-secret-0123456789" });
    t.equal(hook.status, 201, hook.text);
    const queued = await api.post(`/api/webhooks/${hook.body.webhook.id}/trigger`, {});
    t.equal(queued.status, 202, queued.text);
    t.equal((await api.post(`/api/jobs/${queued.body.delivery.job_id}/cancel`)).status, 200);
    const listed = await api.get(`/api/webhooks/${hook.body.webhook.id}/deliveries`);
    t.match(listed.body.data, [{ id: queued.body.delivery.id, status: "failed", error: /cancelled/ }]);
    t.match((await api.get(`/api/webhooks/${hook.body.webhook.id}`)).body.webhook, { is_active: true });
  });
});
