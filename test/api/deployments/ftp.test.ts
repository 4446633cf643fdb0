/**
 * FTP deployments end to end: HTTP → job → a real FTP server on loopback, with the live
 * log over pusher-js, a failing password, retry after fixing it, rollback, and the check
 * that the password appears in no response, no table and no event.
 */
import path from "node:path";
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { publish } from "../../../shared/events/publish.ts";
import { startTestApp } from "../../support/app.ts";
import { buildGeneration, buildEnvironment, findSecrets, sampleFiles, waitForDeployment } from "../../support/deploymentFactories.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { startFtpPeer } from "../../support/peers/ftpPeer.ts";
import { readTree } from "../../support/peers/tree.ts";
import { connectPusher } from "../../support/pusher.ts";
import { until } from "../../support/wait.ts";

t.test("FTP deployments through the API", async (t) => {
  const app = await startTestApp(t, { worker: true });
  const ftp = await startFtpPeer({ echoPasswordOnFailure: true });
  t.teardown(() => ftp.close());
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = await buildProject(app.pool, user.id);
  const files = sampleFiles("1");
  const generation = await buildGeneration(app.pool, project, user.id, files);
  const ftpConfig = { host: ftp.host, port: ftp.port, username: ftp.username, password: ftp.password, remote_path: "/site", passive_mode: true };
  const envId = await buildEnvironment(app.url, token, project, { ftp_config: ftpConfig });
  const seen: unknown[] = [];
  const siteTree = async () => readTree(path.join(ftp.root, "site"));

  await t.test("create (project form), execute, live log in order, files equal the generation", async (t) => {
    const created = await api.post("/api/deployments", { project_id: project, code_generation_id: generation, deployment_method: "ftp", target_environment: "production" });
    t.equal(created.status, 201, created.text);
    seen.push(created.body);
    const deployment = created.body.deployment;
    t.match(deployment, { status: "pending", environment_id: envId, deployment_method: "ftp", target_environment: "production", code_generation_id: generation, job_id: null });

    const pusher = await connectPusher(t, app.url, app.config.realtime.key, token);
    const channel = await pusher.subscribe(`private-deployment.${deployment.id}`);
    const live: { id: number; type: string; message: string }[] = [];
    const completed: unknown[] = [];
    channel.bind("LogAdded", (data: { log: { id: number; type: string; message: string } }) => live.push(data.log));
    channel.bind("DeploymentCompleted", (data: unknown) => completed.push(data));

    const executed = await api.post(`/api/deployments/${deployment.id}/execute`);
    t.equal(executed.status, 202, executed.text);
    seen.push(executed.body);
    t.equal(executed.body.deployment.status, "pending");
    t.ok(executed.body.job.id, "answers with the job");
    const again = await api.post(`/api/deployments/${deployment.id}/execute`);
    t.equal(again.status, 409, "a queued or running deployment is not executed twice");

    const done = await waitForDeployment(app.url, token, deployment.id);
    t.equal(done.status, "succeeded", JSON.stringify(done));
    t.match(done.result, { files: Object.keys(files).length, remotePath: "/site" });
    t.ok(done.started_at && done.finished_at);

    const tree = await siteTree();
    t.same([...tree.keys()].sort(), Object.keys(files).sort(), "the same paths");
    for (const [name, content] of Object.entries(files)) t.same(tree.get(name), content, `${name} has the generation's bytes`);

    const logs = await api.get(`/api/deployments/${deployment.id}/logs`);
    t.equal(logs.status, 200);
    seen.push(logs.body);
    t.ok(logs.body.logs.length >= 3, "steps are logged");
    t.ok(logs.body.logs.some((l: { type: string }) => l.type === "success"));

    // A sentinel, published through the same NOTIFY path once the job is over: the hub keeps
    // NOTIFY order, so when it arrives every event the run published has been delivered, a
    // late duplicate DeploymentCompleted included.
    await until(async () =>
      app.pool.maybeOneFirst(sql.type(z.object({ status: z.string() }))`select status from jobs where id = ${executed.body.job.id} and status = 'succeeded'`),
      { message: "the job to finish" },
    );
    const sentinel = pusher.next(channel, "TestSentinel");
    await publish(app.pool, { channel: `private-deployment.${deployment.id}`, event: "TestSentinel", data: { after: "the job" } });
    t.same(await sentinel, { after: "the job" }, "the sentinel arrived");
    const ids = live.map((l) => l.id);
    t.same(ids, [...ids].sort((a, b) => a - b), "LogAdded arrived in id order");
    t.same(ids, logs.body.logs.map((l: { id: number }) => l.id), "pusher saw every LogAdded, as GET /logs lists them");
    t.same(live, logs.body.logs.map((l: { id: number; type: string; message: string }) => ({ ...l })), "with the same content");
    t.same(completed, [{ status: "succeeded", deployment_id: deployment.id }], "exactly one DeploymentCompleted");
    const after = await api.get(`/api/deployments/${deployment.id}/logs?after_id=${logs.body.logs[1].id}`);
    t.same(after.body.logs.map((l: { id: number }) => l.id), logs.body.logs.slice(2).map((l: { id: number }) => l.id), "after_id pages");
  });

  await t.test("a wrong password fails cleanly with logs and no password in them; retry after fixing it succeeds", async (t) => {
    const wrong = "Wr0ng-Passw0rd-for-ftp";
    const updated = await api.put(`/api/environments/${envId}`, { ftp_config: { ...ftpConfig, password: wrong } });
    t.equal(updated.status, 200, updated.text);
    seen.push(updated.body);
    const second = await buildGeneration(app.pool, project, user.id, sampleFiles("2"));
    const created = await api.post("/api/deployments", { environment_id: envId, code_generation_id: second });
    t.equal(created.status, 201, created.text);
    const id = created.body.deployment.id;
    await api.post(`/api/deployments/${id}/execute`);
    const failed = await waitForDeployment(app.url, token, id);
    t.equal(failed.status, "failed");
    t.equal(failed.error_code, "auth_failed");
    t.notMatch(failed.error, wrong);
    const logs = await api.get(`/api/deployments/${id}/logs`);
    seen.push(failed, logs.body);
    t.ok(logs.body.logs.some((l: { type: string }) => l.type === "error"), "the failure is logged");
    t.notMatch(JSON.stringify(logs.body), wrong, "the quoted password is scrubbed");
    t.same([...(await siteTree()).keys()].sort(), Object.keys(files).sort(), "the live site is untouched");

    const notFailed = await api.post(`/api/deployments/${id - 1}/retry`);
    t.equal(notFailed.status, 409, "only a failed deployment is retried");

    const fixed = await api.put(`/api/environments/${envId}`, { ftp_config: { ...ftpConfig, password: ftp.password } });
    t.equal(fixed.status, 200);
    const retried = await api.post(`/api/deployments/${id}/retry`);
    t.equal(retried.status, 202, retried.text);
    t.equal(retried.body.deployment.status, "pending");
    const done = await waitForDeployment(app.url, token, id);
    t.equal(done.status, "succeeded");
    t.ok(done.attempts >= 2, "the attempts add up");
    t.same((await siteTree()).get("index.php"), sampleFiles("2")["index.php"], "the second generation is live");
  });

  await t.test("rollback redeploys an earlier successful deployment and supersedes the current one", async (t) => {
    const history = await api.get(`/api/projects/${project}/deployments?per_page=1`);
    t.equal(history.status, 200);
    t.equal(history.body.meta.total, 2);
    t.equal(history.body.data.length, 1, "paginated");
    const [current] = history.body.data;
    const earlier = current.id - 1;
    const refused = await api.post(`/api/deployments/${current.id}/rollback`, { rollback_to: current.id + 100 });
    t.equal(refused.status, 422);
    t.ok(refused.body.errors.rollback_to);
    const res = await api.post(`/api/deployments/${current.id}/rollback`, { rollback_to: earlier });
    t.equal(res.status, 202, res.text);
    t.match(res.body.deployment, { rollback_of: current.id, rollback_to: earlier, code_generation_id: generation, status: "pending" });
    const done = await waitForDeployment(app.url, token, res.body.deployment.id);
    t.equal(done.status, "succeeded");
    t.same((await siteTree()).get("index.php"), files["index.php"], "the first generation is live again");
    const superseded = await api.get(`/api/deployments/${current.id}`);
    t.match(superseded.body.deployment, { status: "rolled_back", rolled_back_by: done.id });
    const again = await api.post(`/api/deployments/${current.id}/rollback`, { rollback_to: earlier });
    t.equal(again.status, 409, "a rolled back deployment is not rolled back again");
  });

  await t.test("clearing logs", async (t) => {
    // Its own deployment, run to the end here: no id or log left by an earlier subtest is assumed.
    const created = await api.post("/api/deployments", { project_id: project, code_generation_id: generation, deployment_method: "ftp", target_environment: "production" });
    t.equal(created.status, 201, created.text);
    const id: number = created.body.deployment.id;
    t.equal((await api.post(`/api/deployments/${id}/execute`)).status, 202);
    t.equal((await waitForDeployment(app.url, token, id)).status, "succeeded");
    const logged = (await api.get(`/api/deployments/${id}/logs`)).body.logs.length;
    t.ok(logged > 0, "the run left logs");
    const res = await api.post(`/api/deployments/${id}/logs/clear`);
    t.equal(res.status, 200, res.text);
    t.equal(res.body.deleted, logged, "every log of the deployment deleted");
    t.same((await api.get(`/api/deployments/${id}/logs`)).body.logs, []);
  });

  await t.test("the password is in no response and nowhere in the database", async (t) => {
    const list = await api.get(`/api/projects/${project}/environments`);
    seen.push(list.body);
    t.equal(list.body.environments[0].ftp_config.has_password, true);
    t.notOk("password" in list.body.environments[0].ftp_config);
    const text = JSON.stringify(seen);
    t.notMatch(text, ftp.password);
    t.same(await findSecrets(app.pool, [ftp.password, "Wr0ng-Passw0rd-for-ftp"]), []);
  });
});
