/**
 * An environment that names a git connection uses its owner's token only while the owner
 * still manages the project's deployments (the right they needed to set it up): once they
 * leave the team, the project's remaining managers can no longer test, deploy or commit
 * through their account; the GitHub stand-in hears nothing more with their token, and the
 * answer says why and what to do.
 */
import t from "tap";
import { startTestApp } from "../../support/app.ts";
import { buildGeneration, waitForDeployment } from "../../support/deploymentFactories.ts";
import { buildProject, buildTeam, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { startGithubStandIn } from "../../support/peers/githubPeer.ts";

t.test("a connection lent to a project by someone who left it", async (t) => {
  const gh = await startGithubStandIn();
  t.teardown(() => gh.close());
  const app = await startTestApp(t, {
    worker: true,
    env: { GITHUB_CLIENT_ID: gh.oauth.clientId, GITHUB_CLIENT_SECRET: gh.oauth.clientSecret, GITHUB_OAUTH_BASE: gh.url, GITHUB_API_BASE: gh.url },
  });
  const owner = await buildUserWithToken(app.pool);
  const admin = await buildUserWithToken(app.pool);
  const api = client(app.url, owner.token);
  const adminApi = client(app.url, admin.token);
  const project = await buildProject(app.pool, owner.user.id);
  const team = await buildTeam(app.pool, owner.user.id, { [admin.user.id]: 2 }, [project]);
  const generation = await buildGeneration(app.pool, project, owner.user.id, { "index.ts": "export {};\n" });

  // The administrator connects their GitHub account and lends it to an environment.
  const started = await adminApi.get("/api/git/github/authorize");
  const back = new URL((await fetch(started.body.authorization_url, { redirect: "manual" })).headers.get("location")!);
  const connected = await adminApi.get(`/api/git/github/callback?code=${back.searchParams.get("code")}&state=${back.searchParams.get("state")}`);
  t.equal(connected.status, 201, connected.text);
  const env = await adminApi.post(`/api/projects/${project}/environments`, {
    name: "Repo",
    type: "production",
    git_config: { owner: gh.owner, repo: gh.name, branch: "main", connection_id: connected.body.connection.id },
  });
  t.equal(env.status, 201, env.text);
  const environment = env.body.environment.id as number;
  t.match((await api.post("/api/deployments/test-connection", { environment_id: environment })).body, { ok: true }, "usable while they manage the project");

  t.equal((await api.delete(`/api/teams/${team}/members/${admin.user.id}`)).status, 200, "they leave the team");
  const heard = gh.requests.length;
  const tested = await api.post("/api/deployments/test-connection", { environment_id: environment });
  t.equal(tested.status, 200, tested.text);
  t.match(tested.body, { ok: false, code: "invalid_config", message: /belongs to someone who no longer manages this project's deployments.*another connection or a token/ });

  const created = await api.post("/api/deployments", { environment_id: environment, code_generation_id: generation });
  t.equal(created.status, 201, created.text);
  t.equal((await api.post(`/api/deployments/${created.body.deployment.id}/execute`)).status, 202);
  t.match(await waitForDeployment(app.url, owner.token, created.body.deployment.id), { status: "failed", error_code: "invalid_config", error: /no longer manages/ });

  const commit = await api.post(`/api/projects/${project}/git/commit`, {
    code_generation_id: generation,
    environment_id: environment,
    repository: `${gh.owner}/${gh.name}`,
    branch: "generated",
    message: "Regenerate",
  });
  t.equal(commit.status, 202, commit.text);
  t.match(await waitForDeployment(app.url, owner.token, commit.body.deployment.id), { status: "failed", error_code: "invalid_config", error: /no longer manages/ });
  t.same(gh.requests.slice(heard), [], "the stand-in heard nothing more with their token");
});
