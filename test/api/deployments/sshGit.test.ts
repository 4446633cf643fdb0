/**
 * SSH and git deployments end to end through the API: a real SSH/SFTP server on loopback
 * (the files as one archive extracted into a release folder, or file by file for an
 * SFTP-only account; the release switched in; host key pinned at the first successful login
 * of a stored environment, by a deployment or a connection test, and enforced after), and
 * the GitHub, GitLab and Bitbucket stand-ins driven through the real SDKs (one commit whose
 * tree holds the generation's files, one pull/merge request).
 */
import { mkdir, readdir, rm } from "node:fs/promises";
import path from "node:path";
import t from "tap";
import { startTestApp } from "../../support/app.ts";
import { buildEnvironment, buildGeneration, findSecrets, startDeployment, waitForDeployment } from "../../support/deploymentFactories.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { startBitbucketStandIn } from "../../support/peers/bitbucketPeer.ts";
import { startGithubStandIn } from "../../support/peers/githubPeer.ts";
import { startGitlabStandIn } from "../../support/peers/gitlabPeer.ts";
import type { GitRepo } from "../../support/peers/gitModel.ts";
import { generateKeyPair, startSshPeer } from "../../support/peers/sshPeer.ts";
import { asText, readTree } from "../../support/peers/tree.ts";

const textFiles = (tag: string): Record<string, string> => ({
  "index.php": `<?php echo "release ${tag}";\n`,
  "src/Models/User.php": `<?php\nclass User { const RELEASE = "${tag}"; }\n`,
  "src/Models/Größe.php": `<?php // ${tag} ü\n`,
  "config/app.json": `{"release": "${tag}"}\n`,
});

/** The files as the peers' helpers show them (bytes as latin1, so any content compares exactly). */
const asPeerText = (files: Record<string, string>) => Object.fromEntries(Object.entries(files).map(([name, content]) => [name, Buffer.from(content).toString("latin1")]));

t.test("SSH and git deployments through the API", async (t) => {
  const app = await startTestApp(t, { worker: true });
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = await buildProject(app.pool, user.id);
  const secrets: string[] = [];
  const seen: unknown[] = [];

  await t.test("SSH with a password: the first login pins the host key (the run then failing), a changed key is refused, clearing the pin re-arms", async (t) => {
    const ssh = await startSshPeer();
    t.teardown(() => ssh.close());
    secrets.push(ssh.password);
    const config = { host: ssh.host, port: ssh.port, username: ssh.username, auth_method: "password", password: ssh.password, remote_path: "site" };
    const env = await buildEnvironment(app.url, token, project, { name: "Staging", type: "staging", ssh_config: config });
    const sshConfigOf = async () => (await api.get(`/api/projects/${project}/environments`)).body.environments.find((e: { id: number }) => e.id === env).ssh_config;
    t.match(await sshConfigOf(), { host_key_fingerprint: null, host_key_pinned_at: null, has_password: true, has_private_key: false });

    const inline = await api.post("/api/deployments/test-connection", { ssh_config: config });
    t.match(inline.body, { ok: true, host_key_fingerprint: ssh.hostKeyFingerprint });
    t.equal((await sshConfigOf()).host_key_fingerprint, null, "an inline test has no environment to pin to, even one with the same server");

    // `current` is a real folder: the run logs in, uploads, then fails at the switch.
    await mkdir(path.join(ssh.home, "site", "current"), { recursive: true });
    const files = textFiles("ssh-1");
    const generation = await buildGeneration(app.pool, project, user.id, files);
    const id = await startDeployment(app.url, token, { project_id: project, code_generation_id: generation, deployment_method: "ssh", target_environment: "staging" });
    const failed = await waitForDeployment(app.url, token, id);
    t.match(failed, { status: "failed", error_code: "invalid_config", error: /is not a symlink/ });
    const pinned = await sshConfigOf();
    t.equal(pinned.host_key_fingerprint, ssh.hostKeyFingerprint, "the first successful login pinned the key, though the run failed");
    t.ok(pinned.host_key_pinned_at);
    const logs = (await api.get(`/api/deployments/${id}/logs`)).body.logs.map((l: { message: string }) => l.message);
    t.ok(logs.some((m: string) => m.includes(`host key ${ssh.hostKeyFingerprint} (first connection: pinned for this environment)`)), "the log says so");

    t.ok(logs.some((m: string) => /^Transfer: one tar\.gz archive over SFTP, extracted on the server/.test(m)));
    t.ok(logs.includes(`Extracted 4 files into ${ssh.home}/site/releases/${id}; the archive was removed.`), "the first attempt extracted the release");

    await rm(path.join(ssh.home, "site", "current"), { recursive: true });
    t.equal((await api.post(`/api/deployments/${id}/retry`)).status, 202);
    t.equal((await waitForDeployment(app.url, token, id)).status, "succeeded");
    t.same(asText(await readTree(path.join(ssh.home, "site", "current"))), asPeerText(files), "the live release equals the generation");
    const retried = (await api.get(`/api/deployments/${id}/logs`)).body.logs.map((l: { message: string }) => l.message);
    t.ok(retried.some((m: string) => m.startsWith("An earlier attempt of this deployment already put 4 files into")), "the retry reused the extracted release");
    t.equal(ssh.stats.execs.filter((c) => c.includes(" tar -x ")).length, 1, "the archive was extracted once across both attempts");
    t.same(await sshConfigOf(), pinned, "the pin is unchanged by later logins");

    // The same address with a different host key: a server swapped under us.
    const port = ssh.port;
    await ssh.close();
    const impostor = await startSshPeer({ port, password: ssh.password });
    t.teardown(() => impostor.close());
    const second = await buildGeneration(app.pool, project, user.id, textFiles("ssh-2"));
    const refused = await waitForDeployment(app.url, token, await startDeployment(app.url, token, { environment_id: env, code_generation_id: second }));
    t.match(refused, {
      status: "failed",
      error_code: "host_key_mismatch",
      error: `The SSH host key of ${ssh.host}:${port} changed: expected ${ssh.hostKeyFingerprint}, got ${impostor.hostKeyFingerprint}.`,
    });
    const tested = await api.post("/api/deployments/test-connection", { environment_id: env });
    t.match(tested.body, { ok: false, code: "host_key_mismatch", message: /changed: expected/ }, "the stored environment's test is refused too");
    t.equal(impostor.stats.logins, 0, "no credential was sent to the other key");
    t.equal((await sshConfigOf()).host_key_fingerprint, ssh.hostKeyFingerprint, "a refused key pins nothing");

    // Clearing the pin (after checking the new key) re-arms it: the stored environment's test pins the new key.
    const cleared = await api.put(`/api/environments/${env}`, { ssh_config: { ...config, password: undefined, host_key_fingerprint: null } });
    t.equal(cleared.status, 200, cleared.text);
    t.equal(cleared.body.environment.ssh_config.has_password, true, "an omitted password is kept");
    t.equal(cleared.body.environment.ssh_config.host_key_fingerprint, null);
    const retest = await api.post("/api/deployments/test-connection", { environment_id: env });
    t.match(retest.body, { ok: true, host_key_fingerprint: impostor.hostKeyFingerprint });
    t.equal((await sshConfigOf()).host_key_fingerprint, impostor.hostKeyFingerprint, "the stored environment's test pinned the key");
    t.equal((await api.post(`/api/deployments/${refused.id}/retry`)).status, 202);
    t.equal((await waitForDeployment(app.url, token, refused.id)).status, "succeeded");
    t.equal((await sshConfigOf()).host_key_fingerprint, impostor.hostKeyFingerprint);
    seen.push(inline.body, tested.body, retest.body, cleared.body);
  });

  await t.test("SSH with a private key, checked by the connection test", async (t) => {
    const key = generateKeyPair();
    const ssh = await startSshPeer({ authorizedKeys: [key.public] });
    t.teardown(() => ssh.close());
    secrets.push(...key.private.split("\n").filter((line) => line.length > 20));
    // The archive path runs shell commands on this folder: every metacharacter must stay inert.
    const remotePath = `site $(touch pwned1) \`touch pwned2\`; touch pwned3 'q' "d"`;
    const config = { host: ssh.host, port: ssh.port, username: ssh.username, auth_method: "key", private_key: key.private, remote_path: remotePath };
    const inline = await api.post("/api/deployments/test-connection", { ssh_config: config });
    t.equal(inline.status, 200, inline.text);
    t.match(inline.body, { ok: true, host_key_fingerprint: ssh.hostKeyFingerprint });
    const env = await buildEnvironment(app.url, token, project, { name: "Dev", type: "development", ssh_config: config });
    const stored = await api.post("/api/deployments/test-connection", { environment_id: env });
    t.match(stored.body, { ok: true });
    const wrong = await api.post("/api/deployments/test-connection", { ssh_config: { ...config, private_key: generateKeyPair().private } });
    t.match(wrong.body, { ok: false, code: "auth_failed" });
    seen.push(inline.body, stored.body, wrong.body);
    const files = textFiles("key");
    const id = await startDeployment(app.url, token, { environment_id: env, code_generation_id: await buildGeneration(app.pool, project, user.id, files) });
    t.match(await waitForDeployment(app.url, token, id), { status: "succeeded", result: { transfer: "archive" } });
    t.same(asText(await readTree(path.join(ssh.home, remotePath, "current"))), asPeerText(files));
    t.same(await readdir(ssh.home), [remotePath], "nothing the path spells was run");
  });

  await t.test("SSH to an SFTP-only account: file by file, the same release", async (t) => {
    const ssh = await startSshPeer({ allowExec: false });
    t.teardown(() => ssh.close());
    secrets.push(ssh.password);
    const config = { host: ssh.host, port: ssh.port, username: ssh.username, auth_method: "password", password: ssh.password, remote_path: "site" };
    const env = await buildEnvironment(app.url, token, project, { name: "SFTP only", type: "production", ssh_config: config });
    const files = textFiles("sftp");
    const id = await startDeployment(app.url, token, { environment_id: env, code_generation_id: await buildGeneration(app.pool, project, user.id, files) });
    t.match(await waitForDeployment(app.url, token, id), { status: "succeeded", result: { transfer: "sftp" } });
    t.same(asText(await readTree(path.join(ssh.home, "site", "current"))), asPeerText(files));
    const logs = (await api.get(`/api/deployments/${id}/logs`)).body.logs.map((l: { message: string }) => l.message);
    t.ok(logs.includes("Transfer: file by file over SFTP, because the server runs no commands for this account (SFTP only)."), "the log says why");
    t.same(ssh.stats.execs, []);
  });

  const branchFiles = (repo: GitRepo, branch: string) => repo.filesOf(repo.branches.get(branch)!);

  await t.test("GitHub: one commit on a new branch with the files, one pull request", async (t) => {
    const gh = await startGithubStandIn();
    t.teardown(() => gh.close());
    secrets.push(gh.token);
    const env = await buildEnvironment(app.url, token, project, {
      name: "GitHub",
      git_config: { owner: gh.owner, repo: gh.name, branch: "main", access_token: gh.token, api_url: gh.url },
    });
    const files = textFiles("gh");
    const id = await startDeployment(app.url, token, { environment_id: env, code_generation_id: await buildGeneration(app.pool, project, user.id, files) });
    const done = await waitForDeployment(app.url, token, id);
    t.equal(done.status, "succeeded", JSON.stringify(done));
    t.equal(gh.pulls.length, 1);
    t.match(done.result, { provider: "github", pullRequestNumber: gh.pulls[0]!.number });
    t.same(branchFiles(gh.repo, gh.pulls[0]!.head), { "README.md": "# site\n", ...asPeerText(files) }, "the commit's tree holds the generation");
    seen.push(done, (await api.get(`/api/deployments/${id}/logs`)).body);
  });

  await t.test("GitLab (self-hosted URL): one merge request", async (t) => {
    const gl = await startGitlabStandIn();
    t.teardown(() => gl.close());
    secrets.push(gl.token);
    const env = await buildEnvironment(app.url, token, project, {
      name: "GitLab",
      git_config: { project_id: gl.projectId, branch: "main", access_token: gl.token, gitlab_url: gl.url },
    });
    const listed = (await api.get(`/api/projects/${project}/environments`)).body.environments.find((e: { id: number }) => e.id === env);
    t.match(listed.git_config, { provider: "gitlab", has_access_token: true });
    t.notOk("access_token" in listed.git_config);
    const files = textFiles("gl");
    const id = await startDeployment(app.url, token, { environment_id: env, code_generation_id: await buildGeneration(app.pool, project, user.id, files) });
    const done = await waitForDeployment(app.url, token, id);
    t.equal(done.status, "succeeded", JSON.stringify(done));
    t.equal(gl.mergeRequests.length, 1);
    t.same(branchFiles(gl.repo, gl.mergeRequests[0]!.source_branch), { "README.md": "# site\n", ...asPeerText(files) });
  });

  await t.test("Bitbucket: one pull request", async (t) => {
    const bb = await startBitbucketStandIn();
    t.teardown(() => bb.close());
    secrets.push(bb.appPassword);
    const env = await buildEnvironment(app.url, token, project, {
      name: "Bitbucket",
      git_config: { workspace: bb.workspace, repo: bb.slug, branch: "main", username: bb.username, app_password: bb.appPassword, api_url: `${bb.url}/2.0` },
    });
    const files = textFiles("bb");
    const id = await startDeployment(app.url, token, { environment_id: env, code_generation_id: await buildGeneration(app.pool, project, user.id, files) });
    const done = await waitForDeployment(app.url, token, id);
    t.equal(done.status, "succeeded", JSON.stringify(done));
    t.equal(bb.pulls.length, 1);
    t.same(branchFiles(bb.repo, bb.pulls[0]!.source), { "README.md": "# site\n", ...asPeerText(files) });
    const listed = (await api.get(`/api/projects/${project}/environments`)).body;
    seen.push(listed);
  });

  await t.test("no password, key or token in any response or table", async (t) => {
    t.same(secrets.filter((s) => JSON.stringify(seen).includes(s)), []);
    t.same(await findSecrets(app.pool, secrets), []);
  });
});
