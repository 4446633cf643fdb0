/**
 * Paths a deployment may not write, through HTTP with a worker, for the SSH deployer (a real
 * SSH/SFTP server on loopback, with a shell, so the tar.gz archive path, and SFTP only, file by
 * file) and the git commit route (the GitHub stand-in through the real SDK): a generation
 * recorded with a `.git` hook, a Windows device name or paths that differ only in case (as one
 * recorded before the rules would be) fails with `invalid_config` naming the path, and nothing
 * was written on the server or committed. The FTP deployer and the upload form: outputPaths.test.ts.
 */
import path from "node:path";
import t from "tap";
import { startTestApp } from "../../support/app.ts";
import { buildEnvironment, buildGeneration, startDeployment, waitForDeployment } from "../../support/deploymentFactories.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { startGithubStandIn } from "../../support/peers/githubPeer.ts";
import { startSshPeer } from "../../support/peers/sshPeer.ts";
import { readTree } from "../../support/peers/tree.ts";

/** Generations and what the failure must name. Paths are read in path order: the bad one comes first, last, or second of a pair. */
const cases: [Record<string, string>, RegExp][] = [
  [{ "index.php": "<?php", ".git/hooks/post-checkout": "#!/bin/sh\necho owned" }, /"\.git\/hooks\/post-checkout".*git folder/],
  [{ "index.php": "<?php", "src/GIT~1/config": "[core]" }, /"src\/GIT~1\/config".*git folder/],
  [{ "index.php": "<?php", "src/nul.php": "<?php" }, /"src\/nul\.php".*Windows device name/],
  [{ "index.php": "<?php", "src/User.php": "<?php", "src/user.php": "<?php" }, /`src\/User\.php` and `src\/user\.php` differ only in case/],
];

t.test("SSH deployments and git commits refuse paths that are not portable", async (t) => {
  const gh = await startGithubStandIn();
  t.teardown(() => gh.close());
  const app = await startTestApp(t, {
    worker: true,
    env: { GITHUB_CLIENT_ID: gh.oauth.clientId, GITHUB_CLIENT_SECRET: gh.oauth.clientSecret, GITHUB_OAUTH_BASE: gh.url, GITHUB_API_BASE: gh.url },
  });
  const { user, token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = await buildProject(app.pool, user.id);

  for (const allowExec of [true, false]) {
    await t.test(allowExec ? "SSH with a shell (tar.gz archive)" : "SSH to an SFTP-only account (file by file)", async (t) => {
      const ssh = await startSshPeer({ allowExec });
      t.teardown(() => ssh.close());
      const config = { host: ssh.host, port: ssh.port, username: ssh.username, auth_method: "password", password: ssh.password, remote_path: "site" };
      const env = await buildEnvironment(app.url, token, project, { name: allowExec ? "Shell" : "SFTP only", type: allowExec ? "staging" : "production", ssh_config: config });
      for (const [files, message] of cases) {
        const id = await startDeployment(app.url, token, { environment_id: env, code_generation_id: await buildGeneration(app.pool, project, user.id, files) });
        const done = await waitForDeployment(app.url, token, id);
        t.equal(done.status, "failed", JSON.stringify(done));
        t.equal(done.error_code, "invalid_config");
        t.match(done.error, message);
      }
      const written = await readTree(path.join(ssh.home, "site")).catch(() => new Map<string, Buffer>());
      t.same([...written.keys()], [], "nothing was written on the server");
      t.same(ssh.stats.execs.filter((c) => c.includes(" tar ")), [], "no archive was extracted");

      // The same server takes a portable generation.
      const fine = await startDeployment(app.url, token, { environment_id: env, code_generation_id: await buildGeneration(app.pool, project, user.id, { "index.php": "<?php" }) });
      t.match(await waitForDeployment(app.url, token, fine), { status: "succeeded" });
      t.same([...(await readTree(path.join(ssh.home, "site", "current"))).keys()], ["index.php"]);
    });
  }

  await t.test("a git commit fails naming the path; nothing is committed", async (t) => {
    const started = await api.get("/api/git/github/authorize");
    const back = new URL((await fetch(started.body.authorization_url, { redirect: "manual" })).headers.get("location")!);
    const connected = await api.get(`/api/git/github/callback?code=${back.searchParams.get("code")}&state=${back.searchParams.get("state")}`);
    t.equal(connected.status, 201, connected.text);
    const connection = connected.body.connection.id as number;
    const before = { branches: new Map(gh.repo.branches), commits: gh.repo.commits.size, blobs: gh.repo.blobs.size };
    for (const [files, message] of cases) {
      const generation = await buildGeneration(app.pool, project, user.id, files);
      for (const branch of ["main", "generated"]) {
        const res = await api.post(`/api/projects/${project}/git/commit`, { code_generation_id: generation, connection_id: connection, repository: "acme/site", branch, message: "Generated" });
        t.equal(res.status, 202, res.text);
        const done = await waitForDeployment(app.url, token, res.body.deployment.id, 30_000);
        t.equal(done.status, "failed", JSON.stringify(done));
        t.equal(done.error_code, "invalid_config");
        t.match(done.error, message);
      }
    }
    t.same(gh.repo.branches, before.branches, "no branch moved or was created");
    t.equal(gh.repo.commits.size, before.commits, "no commit");
    t.equal(gh.repo.blobs.size, before.blobs, "no blob uploaded");
    const fine = await api.post(`/api/projects/${project}/git/commit`, {
      code_generation_id: await buildGeneration(app.pool, project, user.id, { "index.php": "<?php" }),
      connection_id: connection,
      repository: "acme/site",
      branch: "generated",
      message: "Generated",
    });
    t.match(await waitForDeployment(app.url, token, fine.body.deployment.id, 30_000), { status: "succeeded", result: { committed: true } });
  });
});
