/**
 * A git connection belongs to the instance it was made with. When the operator points
 * GitLab sign-in at another instance (`GITLAB_URL`), a connection made with the old one
 * sends neither its refresh token nor its access token anywhere: the new instance gets no
 * request, the connection lists as needing reconnection with the reason, and using it (a
 * stored environment's connection test) fails with a clear message. The old configuration,
 * on the same data, still uses it. Likewise for GitHub when only its API base moves.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { buildGeneration } from "../../support/deploymentFactories.ts";
import { buildProject, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { startGithubStandIn } from "../../support/peers/githubPeer.ts";
import { startGitlabStandIn, type GitlabStandIn } from "../../support/peers/gitlabPeer.ts";

const gitlabEnv = (peer: GitlabStandIn) => ({
  GITLAB_CLIENT_ID: peer.oauth.clientId,
  GITLAB_CLIENT_SECRET: peer.oauth.clientSecret,
  GITLAB_URL: peer.url,
  FRONTEND_URL: "https://app.example.test",
});

t.test("a connection is not used with another GitLab instance", async (t) => {
  const before = await startGitlabStandIn();
  const after = await startGitlabStandIn();
  t.teardown(() => Promise.all([before.close(), after.close()]));
  const old = await startTestApp(t, { env: gitlabEnv(before) });
  const { user, token } = await buildUserWithToken(old.pool);
  const oldApi = client(old.url, token);

  // Signed in with the first instance, as a browser would.
  const started = await oldApi.get("/api/git/gitlab/authorize");
  const consent = await fetch(started.body.authorization_url, { redirect: "manual" });
  const back = new URL(consent.headers.get("location")!);
  const done = await oldApi.get(`/api/git/gitlab/callback?code=${back.searchParams.get("code")}&state=${back.searchParams.get("state")}`);
  t.equal(done.status, 201, done.text);
  t.match(done.body.connection, { instance_url: before.url, has_refresh_token: true, needs_reconnection: false, reconnection_reason: null });
  const connection = done.body.connection.id as number;
  // Its token is about to expire, so a use would renew it first.
  await old.pool.query(sql.type(z.object({}))`update git_connections set expires_at = now() + interval '1 minute' where id = ${connection}`);

  const moved = await startTestApp(t, { db: old.db, env: gitlabEnv(after) });
  const api = client(moved.url, token);
  const listed = await api.get("/api/git/connections");
  t.equal(listed.status, 200, listed.text);
  t.match(listed.body.data, [
    {
      id: connection,
      instance_url: before.url,
      needs_reconnection: true,
      reconnection_reason: new RegExp(`made with ${before.url}.*now signs in to GitLab at ${after.url}.*Connect the account again`),
    },
  ]);

  const project = await buildProject(moved.pool, user.id);
  const env = await api.post(`/api/projects/${project}/environments`, { name: "Repo", type: "production", git_config: { project_id: 1, branch: "main", connection_id: connection } });
  t.equal(env.status, 201, env.text);
  const tested = await api.post("/api/deployments/test-connection", { environment_id: env.body.environment.id });
  t.equal(tested.status, 200, tested.text);
  t.match(tested.body, { ok: false, code: "auth_failed", message: /made with .*Connect the account again/ });

  const generation = await buildGeneration(moved.pool, project, user.id, { "a.txt": "a" });
  const commit = await api.post(`/api/projects/${project}/git/commit`, { code_generation_id: generation, connection_id: connection, repository: "acme/site", branch: "generated", message: "Regenerate" });
  t.equal(commit.status, 422, commit.text);
  t.match(commit.body, { code: "git_reauthorization_required", errors: { connection_id: [/Connect the account again/] } }, "a commit through it is refused at once");

  t.same(after.oauth.tokenRequests, [], "the new instance was not asked to renew the old instance's token");
  t.same(after.requests, [], "nor sent anything else");
  t.same(before.oauth.tokenRequests.map((r) => r.grant), ["authorization_code"], "nor was the old instance asked with the new instance's client");
  const apiCalls = before.requests.filter((r) => r.startsWith("GET /api/v4/") && r !== "GET /api/v4/user");
  t.same(apiCalls, [], "the old instance's API was not used either");

  const oldList = await oldApi.get("/api/git/connections");
  t.match(oldList.body.data, [{ id: connection, needs_reconnection: false }], "under the configuration it was made with, it is fine");
});

t.test("a connection is not used with another GitHub API host", async (t) => {
  const gh = await startGithubStandIn();
  const other = await startGithubStandIn();
  t.teardown(() => Promise.all([gh.close(), other.close()]));
  const githubEnv = (api: string) => ({ GITHUB_CLIENT_ID: gh.oauth.clientId, GITHUB_CLIENT_SECRET: gh.oauth.clientSecret, GITHUB_OAUTH_BASE: gh.url, GITHUB_API_BASE: api });
  const old = await startTestApp(t, { env: githubEnv(gh.url) });
  const { user, token } = await buildUserWithToken(old.pool);
  const oldApi = client(old.url, token);
  const started = await oldApi.get("/api/git/github/authorize");
  const back = new URL((await fetch(started.body.authorization_url, { redirect: "manual" })).headers.get("location")!);
  const done = await oldApi.get(`/api/git/github/callback?code=${back.searchParams.get("code")}&state=${back.searchParams.get("state")}`);
  t.equal(done.status, 201, done.text);
  const connection = done.body.connection.id as number;

  // Same sign-in host, but the API base now names another host.
  const moved = await startTestApp(t, { db: old.db, env: githubEnv(other.url) });
  const api = client(moved.url, token);
  t.match((await api.get("/api/git/connections")).body.data, [
    { id: connection, needs_reconnection: true, reconnection_reason: new RegExp(`API at ${gh.url}.*now calls GitHub at ${other.url}`) },
  ]);
  const project = await buildProject(moved.pool, user.id);
  const env = await api.post(`/api/projects/${project}/environments`, { name: "Repo", type: "production", git_config: { owner: other.owner, repo: other.name, branch: "main", connection_id: connection } });
  t.equal(env.status, 201, env.text);
  const tested = await api.post("/api/deployments/test-connection", { environment_id: env.body.environment.id });
  t.match(tested.body, { ok: false, code: "auth_failed", message: /Connect the account again/ });
  t.same(other.requests, [], "the other API host never saw the token");
});
