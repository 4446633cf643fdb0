/**
 * Environments (CRUD, validation per field, secrets sealed and kept on update, one
 * default, a race-safe host key pin), deployment creation rules, the upload form (FTP files and an SSH zip), and the
 * network guard's refusals with ALLOW_PRIVATE_NETWORK_TARGETS=false.
 */
import path from "node:path";
import t from "tap";
import { z } from "zod";
import { createZipStream } from "../../../shared/archive/zipWriter.ts";
import { openText } from "../../../shared/crypto.ts";
import { sql } from "../../../shared/db/pool.ts";
import { findEnvironment, pinHostKey } from "../../../shared/deployments/environments.ts";
import { startTestApp } from "../../support/app.ts";
import { buildGeneration, findSecrets, sampleFiles } from "../../support/deploymentFactories.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { client, request } from "../../support/http.ts";
import { startFtpPeer } from "../../support/peers/ftpPeer.ts";
import { startSshPeer } from "../../support/peers/sshPeer.ts";
import { readTree } from "../../support/peers/tree.ts";

const ftpConfig = { host: "ftp.example.com", port: 21, username: "deployer", password: "Ftp-Secret-0123456", remote_path: "/www" };

t.test("environments and deployment creation", async (t) => {
  const app = await startTestApp(t, { worker: true });
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = await buildProject(app.pool, user.id);
  const seen: unknown[] = [];

  const created = await api.post(`/api/projects/${project}/environments`, { name: "Live", type: "production", ftp_config: ftpConfig });
  t.equal(created.status, 201, created.text);
  seen.push(created.body);
  const env = created.body.environment;
  t.match(env, { is_default: true, ftp_config: { host: "ftp.example.com", port: 21, has_password: true }, ssh_config: null, git_config: null });
  t.notOk("password" in env.ftp_config);

  await t.test("the secret is sealed under APP_KEY", async (t) => {
    const sealed = await app.pool.oneFirst(sql.type(z.object({ s: z.instanceof(Buffer) }))`select ftp_password_sealed as s from environments where id = ${env.id}`);
    t.equal(openText(app.config.appKey, sealed), ftpConfig.password);
    const stored = await app.pool.oneFirst(sql.type(z.object({ c: z.record(z.string(), z.unknown()) }))`select ftp_config as c from environments where id = ${env.id}`);
    t.notOk("password" in stored);
  });

  await t.test("validation: clear 422 per field, nothing stored", async (t) => {
    const res = await api.post(`/api/projects/${project}/environments`, {
      name: "",
      type: "qa",
      ftp_config: { host: "", port: 70000, username: "u", remote_path: "/x" },
    });
    t.equal(res.status, 422);
    t.ok(res.body.errors.name && res.body.errors.type, "top-level fields first");
    const configs = await api.post(`/api/projects/${project}/environments`, {
      name: "Bad",
      type: "staging",
      ftp_config: { host: "", port: 70000, username: "u", remote_path: "/x" },
      ssh_config: { host: "h.example.com", username: "u", auth_method: "key", remote_path: "/x" },
      git_config: { repo: "x" },
    });
    t.equal(configs.status, 422);
    t.ok(configs.body.errors["ftp_config.host"]);
    t.ok(configs.body.errors["ftp_config.port"]);
    t.ok(configs.body.errors["ftp_config.password"]);
    t.match(configs.body.errors["ssh_config.private_key"], [/required when auth_method is key/]);
    t.ok(configs.body.errors["git_config.provider"]);
    const count = await app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from environments`);
    t.equal(count, 1);
  });

  await t.test("update: an omitted secret is kept, null removes it; one default per project", async (t) => {
    const second = await api.post(`/api/projects/${project}/environments`, { name: "Stage", type: "staging", is_default: true, git_config: { owner: "acme", repo: "site", branch: "main", access_token: "ghp_Secret0123456789" } });
    t.equal(second.status, 201);
    seen.push(second.body);
    t.match(second.body.environment.git_config, { provider: "github", has_access_token: true });
    const list = await api.get(`/api/projects/${project}/environments`);
    t.same(list.body.environments.map((e: { is_default: boolean }) => e.is_default), [true, false], "the new default replaced the old one");
    const renamed = await api.put(`/api/environments/${env.id}`, { name: "Live 2", ftp_config: { ...ftpConfig, password: undefined, remote_path: "/www2" } });
    t.equal(renamed.status, 200, renamed.text);
    t.match(renamed.body.environment, { name: "Live 2", ftp_config: { remote_path: "/www2", has_password: true } });
    const sealed = await app.pool.oneFirst(sql.type(z.object({ s: z.instanceof(Buffer) }))`select ftp_password_sealed as s from environments where id = ${env.id}`);
    t.equal(openText(app.config.appKey, sealed), ftpConfig.password, "the password was kept");
    const switched = await api.put(`/api/environments/${second.body.environment.id}`, { git_config: { project_id: 7, branch: "main" } });
    t.equal(switched.status, 422, "a token is not carried over to another provider");
    t.ok(switched.body.errors["git_config.access_token"]);
    const removed = await api.put(`/api/environments/${env.id}`, { ssh_config: null, git_config: null });
    t.equal(removed.status, 200);
  });

  await t.test("pinning a host key only fills an empty pin, so racing first connections cannot overwrite each other", async (t) => {
    const res = await api.post(`/api/projects/${project}/environments`, {
      name: "Pins",
      type: "development",
      ssh_config: { host: "127.0.0.1", username: "u", auth_method: "password", password: "pin-test-Passw0rd", remote_path: "/x" },
    });
    t.equal(res.status, 201, res.text);
    seen.push(res.body);
    const id = res.body.environment.id;
    const stored = async () => (await findEnvironment(app.pool, id))?.ssh_host_key_fingerprint;
    const server = { host: "127.0.0.1", port: "22" };
    const outcomes = await Promise.allSettled([pinHostKey(app.pool, id, "SHA256:first", server), pinHostKey(app.pool, id, "SHA256:second", server)]);
    const won = outcomes.findIndex((o) => o.status === "fulfilled");
    t.same(outcomes.map((o) => o.status).sort(), ["fulfilled", "rejected"], "one pins, the other is refused");
    const lost = outcomes.find((o) => o.status === "rejected") as PromiseRejectedResult;
    t.match(lost.reason, { code: "host_key_mismatch", message: /Another connection pinned the SSH host key/ });
    const winner = ["SHA256:first", "SHA256:second"][won]!;
    t.equal(await stored(), winner);
    await pinHostKey(app.pool, id, `${winner}=`, server);
    t.equal(await stored(), winner, "the same key again (padding aside) passes and changes nothing");
    await t.rejects(pinHostKey(app.pool, id, "SHA256:third", server), { code: "host_key_mismatch" });
    t.equal(await stored(), winner, "a pinned key is never overwritten");
    await pinHostKey(app.pool, 999_999, "SHA256:nowhere", server);
    t.equal((await api.delete(`/api/environments/${id}`)).status, 200);
  });

  await t.test("deployment creation rules", async (t) => {
    const generation = await buildGeneration(app.pool, project, user.id);
    const other = await buildProject(app.pool, user.id);
    const foreign = await buildGeneration(app.pool, other, user.id);
    const noEnv = await api.post("/api/deployments", { project_id: project, code_generation_id: generation, deployment_method: "ssh", target_environment: "production" });
    t.equal(noEnv.status, 422);
    t.match(noEnv.body.errors.target_environment, [/no production environment with a SSH/]);
    const wrongGeneration = await api.post("/api/deployments", { environment_id: env.id, code_generation_id: foreign });
    t.equal(wrongGeneration.status, 422);
    t.ok(wrongGeneration.body.errors.code_generation_id);
    const missing = await api.post("/api/deployments", { code_generation_id: generation });
    t.ok(missing.body.errors.environment_id);
    const incomplete = await api.post("/api/deployments", { project_id: project, code_generation_id: generation });
    t.ok(incomplete.body.errors.deployment_method && incomplete.body.errors.target_environment);
    const ok = await api.post("/api/deployments", { environment_id: env.id, code_generation_id: generation });
    t.equal(ok.status, 201, ok.text);
    t.match(ok.body.deployment, { deployment_method: "ftp", target_environment: "production", status: "pending" });
    const busy = await api.delete(`/api/environments/${env.id}`);
    t.equal(busy.status, 200, "a pending deployment that was never executed does not block deletion");
    t.equal((await api.get(`/api/deployments/${ok.body.deployment.id}`)).body.deployment.environment_id, null, "history stays");
  });

  await t.test("no secret in any response or row", async (t) => {
    t.notMatch(JSON.stringify(seen), ftpConfig.password);
    t.notMatch(JSON.stringify(seen), "ghp_Secret0123456789");
    t.same(await findSecrets(app.pool, [ftpConfig.password, "ghp_Secret0123456789"]), []);
  });
});

t.test("the upload form: FTP files[i] and an SSH archive", async (t) => {
  const app = await startTestApp(t, { worker: true });
  const { token } = await buildUserWithToken(app.pool);
  const ftp = await startFtpPeer();
  t.teardown(() => ftp.close());
  const ssh = await startSshPeer();
  t.teardown(() => ssh.close());
  const files = sampleFiles("up");

  const form = new FormData();
  for (const [name, value] of Object.entries({ deployment_method: "ftp", ftp_host: ftp.host, ftp_port: String(ftp.port), ftp_username: ftp.username, ftp_password: ftp.password, ftp_path: "/upload" })) {
    form.append(name, value);
  }
  form.append("files[0]", new Blob([files["index.php"]!]), "index.php");
  form.append("files[1]", new Blob([files["assets/logo.bin"]!]), "logo.bin");
  const res = await request(app.url, "POST", "/api/deployments/upload", { token, body: form, raw: true });
  t.equal(res.status, 200, res.text);
  t.match(res.body.upload, { status: "succeeded", files: 2, error: null });
  t.ok(res.body.upload.logs.length > 0);
  t.notMatch(res.text, ftp.password);
  const tree = await readTree(path.join(ftp.root, "upload"));
  t.same(tree.get("index.php"), files["index.php"]);
  t.same(tree.get("logo.bin"), files["assets/logo.bin"]);

  const bad = new FormData();
  bad.append("deployment_method", "ftp");
  bad.append("ftp_host", "ftp.example.com");
  const invalid = await request(app.url, "POST", "/api/deployments/upload", { token, body: bad, raw: true });
  t.equal(invalid.status, 422);
  t.ok(invalid.body.errors.ftp_username && invalid.body.errors.ftp_path, `form field names: ${Object.keys(invalid.body.errors).join(", ")}`);

  const chunks: Buffer[] = [];
  for await (const chunk of createZipStream(Object.entries(files).map(([p, content]) => ({ path: p, content })))) chunks.push(chunk as Buffer);
  const sshForm = new FormData();
  for (const [name, value] of Object.entries({ deployment_method: "ssh", ssh_host: ssh.host, ssh_port: String(ssh.port), ssh_username: ssh.username, ssh_auth_method: "password", ssh_password: ssh.password, ssh_path: "site" })) {
    sshForm.append(name, value);
  }
  sshForm.append("archive", new Blob([Buffer.concat(chunks)]), "site.zip");
  const sshRes = await request(app.url, "POST", "/api/deployments/upload", { token, body: sshForm, raw: true });
  t.equal(sshRes.status, 200, sshRes.text);
  t.equal(sshRes.body.upload.status, "succeeded");
  t.ok(
    sshRes.body.upload.logs.some((l: { message: string }) => l.message.includes(`host key ${ssh.hostKeyFingerprint} (first connection; not pinned`)),
    "the upload form has no environment to pin the host key to",
  );
  const live = await readTree(path.join(ssh.home, "site", "current"));
  for (const [name, content] of Object.entries(files)) t.same(live.get(name), content, name);

  const wrong = new FormData();
  for (const [name, value] of Object.entries({ deployment_method: "ftp", ftp_host: ftp.host, ftp_port: String(ftp.port), ftp_username: ftp.username, ftp_password: "Not-The-Password-99", ftp_path: "/upload" })) {
    wrong.append(name, value);
  }
  wrong.append("files[0]", new Blob(["x"]), "x.txt");
  const failed = await request(app.url, "POST", "/api/deployments/upload", { token, body: wrong, raw: true });
  t.equal(failed.status, 200);
  t.match(failed.body.upload, { status: "failed", error: { code: "auth_failed" } });
  t.same(await findSecrets(app.pool, [ftp.password, ssh.password, "Not-The-Password-99"]), [], "no credential in any job record or row");
});

t.test("private and metadata targets are refused when ALLOW_PRIVATE_NETWORK_TARGETS is false", async (t) => {
  const app = await startTestApp(t, { worker: true, env: { ALLOW_PRIVATE_NETWORK_TARGETS: "false" } });
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = await buildProject(app.pool, user.id);
  const ftpLoopback = await api.post(`/api/projects/${project}/environments`, { name: "x", type: "production", ftp_config: { ...ftpConfig, host: "127.0.0.1" } });
  t.equal(ftpLoopback.status, 422);
  t.match(ftpLoopback.body.errors["ftp_config.host"], [/loopback/]);
  const sshPrivate = await api.post(`/api/projects/${project}/environments`, {
    name: "x",
    type: "production",
    ssh_config: { host: "10.1.2.3", username: "u", auth_method: "password", password: "pw-123456", remote_path: "/x" },
  });
  t.match(sshPrivate.body.errors["ssh_config.host"], [/private/]);
  const gitlab = await api.post(`/api/projects/${project}/environments`, {
    name: "x",
    type: "production",
    git_config: { project_id: 1, branch: "main", access_token: "glpat-x0123456789", gitlab_url: "http://169.254.169.254/" },
  });
  t.match(gitlab.body.errors["git_config.gitlab_url"], [/metadata/]);
  const hook = await api.post(`/api/projects/${project}/webhooks`, { event_type: "manual_trigger", target_url: "http://[::1]:8080/hook", secret_key: "hook-secret-0123456789" });
  t.match(hook.body.errors.target_url, [/loopback/]);
  const test = await api.post("/api/deployments/test-connection", { ftp_config: { ...ftpConfig, host: "192.168.0.10" } });
  t.equal(test.status, 422);
  t.ok(test.body.errors["ftp_config.host"]);

  // A webhook stored before the rule (or whose name now resolves privately) is refused when it connects.
  const stored = await api.post(`/api/projects/${project}/webhooks`, { event_type: "manual_trigger", target_url: "https://example.com/hook", secret_key: "hook-secret-0123456789" });
  t.equal(stored.status, 201, stored.text);
  await app.pool.query(sql.type(z.object({}))`update webhooks set target_url = 'http://127.0.0.1:8080/hook' where id = ${stored.body.webhook.id}`);
  t.equal((await api.post(`/api/webhooks/${stored.body.webhook.id}/trigger`, {})).status, 202);
  const deadline = Date.now() + 15_000;
  let delivery: { status: string; attempts: number; error: string | null } | undefined;
  while (Date.now() < deadline) {
    delivery = (await api.get(`/api/webhooks/${stored.body.webhook.id}/deliveries`)).body.data[0];
    if (delivery?.status === "failed") break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  t.match(delivery, { status: "failed", attempts: 1, error: /Refused to connect to 127\.0\.0\.1/ }, "refused at connection time, not retried");
});
