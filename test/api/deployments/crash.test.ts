/**
 * A worker killed mid-deployment: the GitHub stand-in has opened the pull request but the
 * worker dies before it hears so (a proxy holds the answer, then the process gets SIGKILL).
 * Another worker retries the job and reuses the branch and the request: exactly one pull
 * request. Both workers log at debug level; the token is in none of their lines.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import t, { type Test } from "tap";
import { startTestApp } from "../../support/app.ts";
import { buildEnvironment, buildGeneration, findSecrets, startDeployment, waitForDeployment } from "../../support/deploymentFactories.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { startGithubStandIn } from "../../support/peers/githubPeer.ts";
import { spawnReady } from "../../support/processes.ts";

/** Forwards to `target`; the answer to the first request matching `hold` is never sent. */
async function holdingProxy(t: Test, target: string, hold: RegExp) {
  let held: () => void = () => {};
  const heldRequest = new Promise<void>((resolve) => (held = resolve));
  let holding = true;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => !["host", "connection", "content-length"].includes(name))) as Record<string, string>;
      const body = chunks.length ? Buffer.concat(chunks) : undefined;
      void fetch(`${target}${req.url}`, { method: req.method, headers, ...(body ? { body } : {}) }).then(async (answer) => {
        const text = Buffer.from(await answer.arrayBuffer());
        if (holding && hold.test(`${req.method} ${req.url}`)) {
          holding = false;
          held();
          return; // the work is done upstream; the client never learns it
        }
        res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" });
        res.end(text);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, heldRequest };
}

t.test("a worker killed after opening the pull request: the retry reuses it", async (t) => {
  const app = await startTestApp(t, { worker: false });
  const gh = await startGithubStandIn();
  t.teardown(() => gh.close());
  const proxy = await holdingProxy(t, gh.url, /^POST \/repos\/acme\/site\/pulls$/);
  const { user, token } = await buildUserWithToken(app.pool);
  const project = await buildProject(app.pool, user.id);
  const env = await buildEnvironment(app.url, token, project, {
    git_config: { owner: gh.owner, repo: gh.name, branch: "main", access_token: gh.token, api_url: proxy.url },
  });
  const generation = await buildGeneration(app.pool, project, user.id, { "app/index.php": "<?php echo 1;\n", "README.generated.md": "generated\n" });
  const workerEnv = { DATABASE_URL: app.db.url, TEST_LOG_LEVEL: "debug" };
  const first = await spawnReady(t, "test/support/workerProcess.ts", workerEnv);
  const id = await startDeployment(app.url, token, { environment_id: env, code_generation_id: generation });

  await proxy.heldRequest;
  t.equal(gh.pulls.length, 1, "the pull request exists upstream");
  await first.kill("SIGKILL");
  const running = (await client(app.url, token).get(`/api/deployments/${id}`)).body.deployment;
  t.equal(running.status, "running", "the killed attempt left it running");

  const second = await spawnReady(t, "test/support/workerProcess.ts", workerEnv);
  const done = await waitForDeployment(app.url, token, id, 60_000);
  t.equal(done.status, "succeeded", JSON.stringify(done));
  t.equal(gh.pulls.length, 1, "exactly one pull request");
  t.match(done.result, { reusedPullRequest: true, pullRequestNumber: gh.pulls[0]!.number });
  t.ok(done.attempts >= 2);
  t.equal(gh.requests.filter((r) => r === "POST /repos/acme/site/git/refs").length, 1, "the branch was created once");

  await second.kill("SIGTERM");
  const lines = first.output() + second.output();
  t.ok(lines.length > 0, "the workers logged");
  t.notMatch(lines, gh.token, "no log line holds the token");
  t.same(await findSecrets(app.pool, [gh.token]), [], "no job record or row holds the token");
});
