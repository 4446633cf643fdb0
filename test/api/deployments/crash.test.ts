/**
 * A worker killed mid-deployment, for each git host: the stand-in has opened the pull (or
 * merge) request but the worker dies before it hears so (a proxy holds the answer, then the
 * process gets SIGKILL). Another worker retries the job and reuses the branch and the
 * request: exactly one request, the commit made once. Both workers log at debug level; the
 * credential is in none of their lines. The three hosts' deployments run side by side in
 * the same two worker processes (one killed, one retrying).
 */
import t from "tap";
import { startTestApp } from "../../support/app.ts";
import { buildEnvironment, buildGeneration, findSecrets, startDeployment, waitForDeployment } from "../../support/deploymentFactories.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { startBitbucketStandIn } from "../../support/peers/bitbucketPeer.ts";
import { startGithubStandIn } from "../../support/peers/githubPeer.ts";
import { startGitlabStandIn } from "../../support/peers/gitlabPeer.ts";
import { holdingProxy } from "../../support/peers/holdingProxy.ts";
import type { HttpPeer } from "../../support/peers/httpPeer.ts";
import { spawnReady } from "../../support/processes.ts";

/** One git host: its stand-in, the request that opens the pull request, the one that commits. */
interface Host {
  name: string;
  start(): Promise<{
    peer: HttpPeer;
    secret: string;
    /** The git_config pointing at the proxy in front of the stand-in. */
    config(proxyUrl: string): Record<string, unknown>;
    requests(): number;
  }>;
  /** `METHOD path` of the request opening the pull/merge request. */
  opens: RegExp;
  /** `METHOD path` of the request that writes the commit (and creates the branch). */
  commits: string;
}

const hosts: Host[] = [
  {
    name: "GitHub pull request",
    start: async () => {
      const gh = await startGithubStandIn();
      return {
        peer: gh,
        secret: gh.token,
        config: (url) => ({ owner: gh.owner, repo: gh.name, branch: "main", access_token: gh.token, api_url: url }),
        requests: () => gh.pulls.length,
      };
    },
    opens: /^POST \/repos\/acme\/site\/pulls$/,
    commits: "POST /repos/acme/site/git/refs",
  },
  {
    name: "GitLab merge request",
    start: async () => {
      const gl = await startGitlabStandIn();
      return {
        peer: gl,
        secret: gl.token,
        config: (url) => ({ project_id: gl.projectId, branch: "main", access_token: gl.token, gitlab_url: url }),
        requests: () => gl.mergeRequests.length,
      };
    },
    opens: /^POST \/api\/v4\/projects\/42\/merge_requests$/,
    commits: "POST /api/v4/projects/42/repository/commits",
  },
  {
    name: "Bitbucket pull request",
    start: async () => {
      const bb = await startBitbucketStandIn();
      return {
        peer: bb,
        secret: bb.appPassword,
        config: (url) => ({ workspace: bb.workspace, repo: bb.slug, branch: "main", username: bb.username, app_password: bb.appPassword, api_url: `${url}/2.0` }),
        requests: () => bb.pulls.length,
      };
    },
    opens: /^POST \/2\.0\/repositories\/acme\/site\/pullrequests$/,
    commits: "POST /2.0/repositories/acme/site/src",
  },
];

t.test("a worker killed after opening the pull requests: the retry reuses them", async (t) => {
  const app = await startTestApp(t, { worker: false });
  const { user, token } = await buildUserWithToken(app.pool);
  const project = await buildProject(app.pool, user.id);
  // One worker takes the three deployments at once, so one kill and one retrying worker
  // cover every host; each host has its own stand-in, proxy and environment.
  const workerEnv = { DATABASE_URL: app.db.url, TEST_LOG_LEVEL: "debug", WORKER_CONCURRENCY: String(hosts.length) };
  const cases = [];
  for (const host of hosts) {
    const stand = await host.start();
    t.teardown(() => stand.peer.close());
    const proxy = await holdingProxy(t, stand.peer.url, host.opens);
    const env = await buildEnvironment(app.url, token, project, { name: host.name, git_config: stand.config(proxy.url) });
    const generation = await buildGeneration(app.pool, project, user.id, { "app/index.php": "<?php echo 1;\n", "README.generated.md": "generated\n" });
    cases.push({ host, stand, proxy, env, generation });
  }

  const first = await spawnReady(t, "test/support/workerProcess.ts", workerEnv);
  const started = [];
  for (const c of cases) started.push({ ...c, id: await startDeployment(app.url, token, { environment_id: c.env, code_generation_id: c.generation }) });
  await Promise.all(started.map((c) => c.proxy.heldRequest));
  for (const c of started) t.equal(c.stand.requests(), 1, `${c.host.name}: the request exists upstream`);
  await first.kill("SIGKILL");
  for (const c of started) {
    const running = (await client(app.url, token).get(`/api/deployments/${c.id}`)).body.deployment;
    t.equal(running.status, "running", `${c.host.name}: the killed attempt left it running`);
  }

  const second = await spawnReady(t, "test/support/workerProcess.ts", workerEnv);
  for (const c of started) {
    await t.test(c.host.name, async (t) => {
      const done = await waitForDeployment(app.url, token, c.id, 120_000);
      t.equal(done.status, "succeeded", JSON.stringify(done));
      t.equal(c.stand.requests(), 1, "exactly one request");
      t.match(done.result, { reusedPullRequest: true, pullRequestNumber: 1 });
      t.ok(done.attempts >= 2);
      t.equal(c.stand.peer.requests.filter((r) => r === c.host.commits).length, 1, "the commit was written once");
    });
  }

  await second.kill("SIGTERM");
  const lines = first.output() + second.output();
  t.ok(lines.length > 0, "the workers logged");
  for (const c of started) {
    t.notMatch(lines, c.stand.secret, `no log line holds the ${c.host.name} credential`);
    t.same(await findSecrets(app.pool, [c.stand.secret]), [], `no job record or row holds the ${c.host.name} credential`);
  }
});
