/**
 * Peers that accept the connection and then never answer: a deployment to them ends `failed`
 * with code `timeout` once DEPLOYMENT_TIMEOUT_S has passed, a webhook delivery to them is
 * retried after WEBHOOK_TIMEOUT_MS and then recorded as failed, and in both cases the worker
 * goes on to run the next job. The limits are set short through their settings; the waits
 * are `until()`, whose guard only catches a hang.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildEnvironment, buildGeneration, sampleFiles, startDeployment } from "../../support/deploymentFactories.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { startFtpPeer } from "../../support/peers/ftpPeer.ts";
import { startSilentHttpServer, startStallingPeer } from "../../support/peers/stallingPeer.ts";
import { until } from "../../support/wait.ts";
import { startWebhookReceiver } from "../../support/webhookReceiver.ts";

const finalStates = ["succeeded", "failed", "rolled_back"];

t.test("a deployment to a peer that never answers fails at DEPLOYMENT_TIMEOUT_S; the worker runs the next one", async (t) => {
  const app = await startTestApp(t, { worker: true, env: { DEPLOYMENT_TIMEOUT_S: "10" } });
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = await buildProject(app.pool, user.id);
  const generation = await buildGeneration(app.pool, project, user.id, sampleFiles("1"));
  const finished = (id: number) =>
    until(async () => {
      const deployment = (await api.get(`/api/deployments/${id}`)).body.deployment;
      return finalStates.includes(deployment?.status) ? deployment : undefined;
    }, { timeoutMs: 180_000, message: `deployment ${id} to end` });

  const silent = await startStallingPeer(t);
  const ftpGreets = await startStallingPeer(t, "220 Hanging FTP ready\r\n");
  const sshGreets = await startStallingPeer(t, "SSH-2.0-OpenSSH_9.6 hanging\r\n");
  const ftp = (port: number) => ({ host: "127.0.0.1", port, username: "deployer", password: "ftp-pass-0123456789", remote_path: "/site", passive_mode: true });
  const cases = [
    // The client says nothing before the greeting (QUIT at most, when it gives up).
    { name: "an FTP host that accepts and says nothing", peer: silent, body: { ftp_config: ftp(silent.port) }, sent: /^(QUIT\r\n)?$/ },
    // After the greeting, basic-ftp asks for UTF-8 file names first and waits for the answer.
    { name: "an FTP host that greets and then stalls", peer: ftpGreets, body: { ftp_config: ftp(ftpGreets.port) }, sent: /^OPTS UTF8 ON\r\n/ },
    {
      name: "an SSH host that sends its version and then stalls",
      peer: sshGreets,
      body: { ssh_config: { host: "127.0.0.1", port: sshGreets.port, username: "deployer", auth_method: "password", password: "ssh-pass-0123456789", remote_path: "site" } },
      sent: /^SSH-2\.0-/,
    },
  ];
  // One environment each (one deployment per environment at a time); all three start at once.
  const started = [];
  for (const [index, c] of cases.entries()) {
    const environment = await buildEnvironment(app.url, token, project, { name: `Hanging ${index}`, type: "staging", ...c.body });
    started.push({ ...c, id: await startDeployment(app.url, token, { environment_id: environment, code_generation_id: generation }) });
  }
  for (const c of started) {
    await t.test(c.name, async (t) => {
      const done = await finished(c.id);
      t.match(done, { status: "failed", error_code: "timeout", error: "The deployment took longer than 10 s and was stopped." }, "failed with the timeout, saying so");
      t.ok(done.finished_at, "with its end recorded");
      t.ok(c.peer.connections >= 1, "the peer was reached");
      t.match(c.peer.received[0], c.sent, `the client spoke as far as the peer let it (${JSON.stringify(c.peer.received[0]?.slice(0, 40))})`);
      const logs = (await api.get(`/api/deployments/${c.id}/logs`)).body.logs as { type: string; message: string }[];
      t.match(logs.at(-1), { type: "error", message: "The deployment took longer than 10 s and was stopped." }, "the log ends with the timeout");
      const job = await app.pool.one(sql.type(z.object({ status: z.string(), error_code: z.string().nullable(), attempts: z.number() }))`
        select j.status, j.error_code, j.attempts from jobs j join deployments d on d.job_id = j.id where d.id = ${c.id}`);
      t.same(job, { status: "failed", error_code: "timeout", attempts: 1 }, "a timeout is final: no further attempt");
    });
  }

  await t.test("the worker then deploys to a host that answers", async (t) => {
    const live = await startFtpPeer();
    t.teardown(() => live.close());
    const environment = await buildEnvironment(app.url, token, project, {
      name: "Live",
      type: "production",
      ftp_config: { host: live.host, port: live.port, username: live.username, password: live.password, remote_path: "/site", passive_mode: true },
    });
    const done = await finished(await startDeployment(app.url, token, { environment_id: environment, code_generation_id: generation }));
    t.match(done, { status: "succeeded", error: null, error_code: null });
    t.ok(live.stats.stores >= Object.keys(sampleFiles("1")).length, "every file was stored");
  });
});

t.test("a webhook receiver that never answers: each attempt ends at WEBHOOK_TIMEOUT_MS, the delivery is retried and then failed", async (t) => {
  const app = await startTestApp(t, { worker: true, env: { WEBHOOK_TIMEOUT_MS: "300", WEBHOOK_MAX_ATTEMPTS: "2" } });
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = await buildProject(app.pool, user.id);
  const silent = await startSilentHttpServer(t);
  const hook = await api.post(`/api/projects/${project}/webhooks`, { event_type: "manual_trigger", target_url: silent.url, secret_key: "hanging-secret-0123456789" });
  t.equal(hook.status, 201, hook.text);
  const hookId = hook.body.webhook.id as number;
  t.equal((await api.post(`/api/webhooks/${hookId}/trigger`, {})).status, 202);

  const state = z.object({ id: z.number(), status: z.string(), attempts: z.number(), error: z.string().nullable(), response_status: z.number().nullable() });
  const delivery = () => app.pool.maybeOne(sql.type(state)`select id, status, attempts, error, response_status from webhook_deliveries where webhook_id = ${hookId}`);
  const first = await until(async () => {
    const row = await delivery();
    return row && row.attempts === 1 && row.status === "pending" ? row : undefined;
  }, { message: "the first attempt to be recorded" });
  t.match(first, { status: "pending", error: "No answer within 300 ms.", response_status: null }, "the first attempt timed out and another is due");
  const last = await until(async () => {
    const row = await delivery();
    return row && (row.status === "succeeded" || row.status === "failed") ? row : undefined;
  }, { timeoutMs: 120_000, message: "the delivery to end" });
  t.match(last, { status: "failed", attempts: 2, error: "No answer within 300 ms.", response_status: null }, "the second attempt timed out too: failed for good");
  t.equal(silent.received.length, 2, "the receiver got one request per attempt");
  t.match((await api.get(`/api/webhooks/${hookId}`)).body.webhook, { consecutive_failures: 1, is_active: true }, "one failed delivery counted");
  // The job's record ends just after the delivery row it wrote: wait for it, as for the row.
  const job = await until(async () => {
    const row = await app.pool.one(sql.type(z.object({ status: z.string(), attempts: z.number(), error: z.string().nullable() }))`
      select status, attempts, error from jobs where kind = 'webhooks__deliver' order by id limit 1`);
    return row.status === "running" || row.status === "queued" ? undefined : row;
  }, { message: "the delivery's job to end" });
  t.match(job, { status: "failed", attempts: 2, error: /No answer within 300 ms/ });

  // The worker is not stuck on the hanging socket: the next delivery goes out.
  const receiver = await startWebhookReceiver(t);
  const live = await api.post(`/api/projects/${project}/webhooks`, { event_type: "manual_trigger", target_url: receiver.url, secret_key: "answering-secret-0123456789" });
  t.equal(live.status, 201, live.text);
  t.equal((await api.post(`/api/webhooks/${live.body.webhook.id}/trigger`, {})).status, 202);
  const delivered = await until(async () => {
    const row = await app.pool.maybeOne(sql.type(state)`select id, status, attempts, error, response_status from webhook_deliveries where webhook_id = ${live.body.webhook.id}`);
    return row && (row.status === "succeeded" || row.status === "failed") ? row : undefined;
  }, { message: "the next delivery to end" });
  t.match(delivered, { status: "succeeded", attempts: 1, response_status: 200, error: null });
  t.equal(receiver.received.length, 1, "the answering receiver got it once");
});
