/**
 * No credential in any log line, job record or response: the service runs with its log
 * captured at trace level (web and worker in this process) through FTP (a wrong password the
 * server echoes back), SSH (password, private key, a wrong password), GitHub, GitLab and
 * Bitbucket deployments, connection tests, a webhook created and delivered, and the upload
 * form; then every captured line, every answer and every row (job records, graphile-worker's
 * job payloads, bytea columns decoded as UTF-8) is searched for each secret. Positive
 * controls show that each search would find a secret that is there.
 */
import { Readable } from "node:stream";
import t from "tap";
import { createZipStream } from "../../../shared/archive/zipWriter.ts";
import { startTestApp } from "../../support/app.ts";
import { buildGeneration, findSecrets, recordingClient, sampleFiles, waitForDeployment } from "../../support/deploymentFactories.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { request } from "../../support/http.ts";
import { startBitbucketStandIn } from "../../support/peers/bitbucketPeer.ts";
import { startFtpPeer } from "../../support/peers/ftpPeer.ts";
import { startGithubStandIn } from "../../support/peers/githubPeer.ts";
import { startGitlabStandIn } from "../../support/peers/gitlabPeer.ts";
import { generateKeyPair, startSshPeer } from "../../support/peers/sshPeer.ts";
import { startWebhookReceiver } from "../../support/webhookReceiver.ts";

/** The base64 lines of a PEM/OpenSSH private key: any of them in a text is a leak. */
const keyBody = (pem: string) => pem.split("\n").filter((line) => line.length >= 20 && !line.startsWith("-----"));

/** The secrets of `secrets` that occur in any of `texts`, with where. */
const leaksIn = (texts: string[], secrets: string[]) =>
  secrets.flatMap((secret) => texts.filter((text) => text.includes(secret)).map((text) => `${secret.slice(0, 8)}… in ${text.slice(0, 200)}`));

t.test("no secret in any log line, job record or response", async (t) => {
  const lines: string[] = [];
  const app = await startTestApp(t, { worker: true, logLines: lines });
  const { user, token } = await buildUserWithToken(app.pool);
  const answers: string[] = [];
  const api = recordingClient(app.url, token, answers);
  const project = await buildProject(app.pool, user.id);
  const secrets: string[] = [];
  /** An environment made through the recording client. */
  const buildEnvironment = async (body: Record<string, unknown>): Promise<number> => {
    const res = await api.post(`/api/projects/${project}/environments`, { type: "production", ...body });
    if (res.status !== 201) throw new Error(`environment not created: ${res.text}`);
    return res.body.environment.id;
  };
  /** Deploys a new generation to `env`; every answer on the way (logs included) is recorded. */
  const deploy = async (env: number, files?: Record<string, string>) => {
    const created = await api.post("/api/deployments", { environment_id: env, code_generation_id: await buildGeneration(app.pool, project, user.id, files) });
    const id = created.body.deployment.id;
    await api.post(`/api/deployments/${id}/execute`);
    await waitForDeployment(app.url, token, id);
    await api.get(`/api/deployments/${id}/logs`);
    return (await api.get(`/api/deployments/${id}`)).body.deployment;
  };

  await t.test("FTP with a wrong password the server echoes back", async (t) => {
    const ftp = await startFtpPeer({ echoPasswordOnFailure: true });
    t.teardown(() => ftp.close());
    const wrong = "Wr0ng-FTP-Passw0rd-in-logs";
    secrets.push(ftp.password, wrong);
    const env = await buildEnvironment({ name: "FTP", ftp_config: { host: ftp.host, port: ftp.port, username: ftp.username, password: wrong, remote_path: "/site" } });
    t.match(await deploy(env), { status: "failed", error_code: "auth_failed" });
    const tested = await api.post("/api/deployments/test-connection", { environment_id: env });
    t.match(tested.body, { ok: false, code: "auth_failed" });
    t.equal((await api.put(`/api/environments/${env}`, { ftp_config: { host: ftp.host, port: ftp.port, username: ftp.username, password: ftp.password, remote_path: "/site" } })).status, 200);
    t.match(await deploy(env), { status: "succeeded" });
    await api.get(`/api/projects/${project}/environments`);
    await api.get(`/api/projects/${project}/deployments`);
  });

  await t.test("SSH with a password (and a wrong one) and with a private key", async (t) => {
    const key = generateKeyPair();
    const ssh = await startSshPeer({ authorizedKeys: [key.public] });
    t.teardown(() => ssh.close());
    const wrong = "Wr0ng-SSH-Passw0rd-in-logs";
    secrets.push(ssh.password, wrong, ...keyBody(key.private));
    const base = { host: ssh.host, port: ssh.port, username: ssh.username, remote_path: "site" };
    const byPassword = await buildEnvironment({ name: "SSH password", type: "staging", ssh_config: { ...base, auth_method: "password", password: ssh.password } });
    t.match(await deploy(byPassword), { status: "succeeded" });
    const byKey = await buildEnvironment({ name: "SSH key", type: "development", ssh_config: { ...base, auth_method: "key", private_key: key.private } });
    t.match(await deploy(byKey), { status: "succeeded" });
    const wrongEnv = await buildEnvironment({ name: "SSH wrong", type: "development", ssh_config: { ...base, auth_method: "password", password: wrong } });
    t.match(await deploy(wrongEnv), { status: "failed", error_code: "auth_failed" });
    t.match((await api.post("/api/deployments/test-connection", { ssh_config: { ...base, auth_method: "key", private_key: key.private } })).body, { ok: true });
    t.match((await api.post("/api/deployments/test-connection", { ssh_config: { ...base, auth_method: "password", password: wrong } })).body, { ok: false, code: "auth_failed" });
  });

  await t.test("GitHub, GitLab and Bitbucket", async (t) => {
    const gh = await startGithubStandIn();
    const gl = await startGitlabStandIn();
    const bb = await startBitbucketStandIn();
    t.teardown(() => Promise.all([gh.close(), gl.close(), bb.close()]));
    secrets.push(gh.token, gl.token, bb.appPassword);
    const files = { "index.php": "<?php echo 1;\n" };
    const github = await buildEnvironment({ name: "GitHub", git_config: { owner: gh.owner, repo: gh.name, branch: "main", access_token: gh.token, api_url: gh.url } });
    t.match(await deploy(github, files), { status: "succeeded" });
    const gitlab = await buildEnvironment({ name: "GitLab", git_config: { project_id: gl.projectId, branch: "main", access_token: gl.token, gitlab_url: gl.url } });
    t.match(await deploy(gitlab, files), { status: "succeeded" });
    const bitbucket = await buildEnvironment({
      name: "Bitbucket",
      git_config: { workspace: bb.workspace, repo: bb.slug, branch: "main", username: bb.username, app_password: bb.appPassword, api_url: `${bb.url}/2.0` },
    });
    t.match(await deploy(bitbucket, files), { status: "succeeded" });
    t.equal(gl.mergeRequests.length + bb.pulls.length + gh.pulls.length, 3);
    const wrongToken = await buildEnvironment({
      name: "GitLab wrong",
      git_config: { project_id: gl.projectId, branch: "main", access_token: "glpat-Wr0ngTokenInLogs99", gitlab_url: gl.url },
    });
    secrets.push("glpat-Wr0ngTokenInLogs99");
    t.match(await deploy(wrongToken, files), { status: "failed" });
  });

  await t.test("a webhook created and delivered", async (t) => {
    const receiver = await startWebhookReceiver(t);
    const secret = "whsec-Logged-Nowhere-0123456789";
    secrets.push(secret);
    const hook = await api.post(`/api/projects/${project}/webhooks`, { event_type: "manual_trigger", target_url: receiver.url, secret_key: secret });
    t.equal(hook.status, 201, hook.text);
    t.equal((await api.post(`/api/webhooks/${hook.body.webhook.id}/trigger`, {})).status, 202);
    await receiver.waitFor(1);
    const rotated = "whsec-Rotated-Logged-Nowhere-987";
    secrets.push(rotated);
    t.equal((await api.put(`/api/webhooks/${hook.body.webhook.id}`, { secret_key: rotated })).status, 200);
    t.equal((await api.post(`/api/webhooks/${hook.body.webhook.id}/trigger`, {})).status, 202);
    await receiver.waitFor(2);
  });

  await t.test("the upload form: FTP with a password, SSH with a key", async (t) => {
    const ftp = await startFtpPeer();
    const key = generateKeyPair();
    const ssh = await startSshPeer({ authorizedKeys: [key.public] });
    t.teardown(() => Promise.all([ftp.close(), ssh.close()]));
    secrets.push(ftp.password, ...keyBody(key.private));
    const upload = async (fields: Record<string, string>, file: [string, Buffer, string]) => {
      const form = new FormData();
      for (const [name, value] of Object.entries(fields)) form.append(name, value);
      form.append(file[0], new Blob([file[1]]), file[2]);
      const res = await request(app.url, "POST", "/api/deployments/upload", { token, body: form, raw: true });
      answers.push(res.text);
      return res;
    };
    const ftpRes = await upload(
      { deployment_method: "ftp", ftp_host: ftp.host, ftp_port: String(ftp.port), ftp_username: ftp.username, ftp_password: ftp.password, ftp_path: "/upload" },
      ["files[0]", Buffer.from("<?php echo 2;\n"), "index.php"],
    );
    t.match(ftpRes.body.upload, { status: "succeeded" });
    const chunks: Buffer[] = [];
    for await (const chunk of createZipStream(Object.entries(sampleFiles("up")).map(([path, content]) => ({ path, content })))) chunks.push(chunk as Buffer);
    const sshRes = await upload(
      { deployment_method: "ssh", ssh_host: ssh.host, ssh_port: String(ssh.port), ssh_username: ssh.username, ssh_auth_method: "key", ssh_key: key.private, ssh_path: "site" },
      ["archive", Buffer.concat(chunks), "site.zip"],
    );
    t.match(sshRes.body.upload, { status: "succeeded" });
  });

  await t.test("the searches find a secret that is there", async (t) => {
    const canary = "Canary-Plaintext-Secret-42";
    await buildGeneration(app.pool, project, user.id, { "leak.txt": Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(canary), Buffer.from([0xc3])]) });
    await app.deps.storage.put("canary/leak.bin", Readable.from([Buffer.from([0x80]), Buffer.from(canary)]));
    const found = await findSecrets(app.pool, [canary]);
    t.match(found, [/^public\.code_generation_files\.content: /, /^public\.stored_file_chunks\.data: /], "bytea columns are decoded and searched");
    t.equal(found.length, 2);
    app.deps.log.info({ note: `planted ${canary}` }, "canary line");
    t.equal(leaksIn(lines, [canary]).length, 1, "the captured log is searched");
  });

  await t.test("none of the secrets is anywhere", async (t) => {
    // Nothing is still being written: every job has finished.
    const workers = lines.filter((line) => line.includes('"component":"graphile-worker"'));
    t.ok(workers.length > 0 && lines.length > 100, `${lines.length} log lines captured, ${workers.length} of the worker`);
    for (const kind of ["deployments__run", "deployments__upload", "webhooks__deliver"]) {
      t.ok(lines.some((line) => line.includes(kind)), `the log covers ${kind}`);
    }
    t.ok(secrets.length >= 14, `${secrets.length} secrets`);
    t.same(leaksIn(lines, secrets), [], "no log line");
    t.same(leaksIn(answers, secrets), [], `none of the ${answers.length} answers`);
    t.same(await findSecrets(app.pool, secrets), [], "no row: jobs, graphile-worker's payloads, logs, files");
  });
});
