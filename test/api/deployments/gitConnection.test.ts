/**
 * A git environment that names a git connection (`connection_id`, the caller's sign-in at the
 * host) instead of a pasted token: refused unless the connection exists, is the caller's own
 * and is for the config's provider (and with a token or host given alongside); accepted, it
 * stores no secret, and deployments, connection tests and commits through the environment use
 * the connection's OAuth token with the GitHub, GitLab and Bitbucket stand-ins, through the
 * real SDKs (GitLab's stand-in takes an OAuth token only as a Bearer token, Bitbucket's only
 * as a Bearer token or the app password). The token appears in no answer and no table.
 */
import t from "tap";
import { startTestApp } from "../../support/app.ts";
import { buildGeneration, findSecrets, startDeployment, waitForDeployment } from "../../support/deploymentFactories.ts";
import { buildProject, buildTeam, buildUserWithToken } from "../../support/factories.ts";
import { client } from "../../support/http.ts";
import { startBitbucketStandIn } from "../../support/peers/bitbucketPeer.ts";
import { startGithubStandIn } from "../../support/peers/githubPeer.ts";
import { startGitlabStandIn } from "../../support/peers/gitlabPeer.ts";

const files = { "src/index.ts": "export const answer = 42;\n" };

t.test("git environments through a git connection", async (t) => {
  const gh = await startGithubStandIn();
  const gl = await startGitlabStandIn();
  const bb = await startBitbucketStandIn();
  t.teardown(() => Promise.all([gh.close(), gl.close(), bb.close()]));
  const app = await startTestApp(t, {
    worker: true,
    env: {
      GITHUB_CLIENT_ID: gh.oauth.clientId,
      GITHUB_CLIENT_SECRET: gh.oauth.clientSecret,
      GITHUB_OAUTH_BASE: gh.url,
      GITHUB_API_BASE: gh.url,
      GITLAB_CLIENT_ID: gl.oauth.clientId,
      GITLAB_CLIENT_SECRET: gl.oauth.clientSecret,
      GITLAB_URL: gl.url,
      BITBUCKET_CLIENT_ID: bb.oauth.clientId,
      BITBUCKET_CLIENT_SECRET: bb.oauth.clientSecret,
      BITBUCKET_OAUTH_BASE: bb.url,
      BITBUCKET_API_BASE: `${bb.url}/2.0`,
    },
  });
  const { user, token } = await buildUserWithToken(app.pool);
  const member = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  const project = await buildProject(app.pool, user.id);
  await buildTeam(app.pool, user.id, { [member.user.id]: 2 }, [project]);
  const generation = await buildGeneration(app.pool, project, user.id, files);
  const seen: unknown[] = [];

  const connect = async (as: ReturnType<typeof client>, provider: string) => {
    const started = await as.get(`/api/git/${provider}/authorize`);
    const back = new URL((await fetch(started.body.authorization_url, { redirect: "manual" })).headers.get("location")!);
    const done = await as.get(`/api/git/${provider}/callback?code=${back.searchParams.get("code")}&state=${back.searchParams.get("state")}`);
    if (done.status !== 201) throw new Error(done.text);
    return done.body.connection.id as number;
  };
  const github = await connect(api, "github");
  const gitlab = await connect(api, "gitlab");
  const bitbucket = await connect(api, "bitbucket");
  const membersGithub = await connect(client(app.url, member.token), "github");
  const configs = {
    github: { owner: gh.owner, repo: gh.name, branch: "main", connection_id: github },
    gitlab: { project_id: gl.projectId, branch: "main", connection_id: gitlab },
    bitbucket: { workspace: bb.workspace, repo: bb.slug, branch: "main", connection_id: bitbucket },
  };
  const create = (git_config: Record<string, unknown>, as = api) => as.post(`/api/projects/${project}/environments`, { name: `Env ${Math.random()}`, type: "staging", git_config });

  await t.test("refused: unknown, someone else's, another provider's connection, a token or host alongside; nothing stored", async (t) => {
    const count = async () => (await api.get(`/api/projects/${project}/environments`)).body.environments.length;
    const before = await count();
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ ...configs.github, connection_id: 999_999 }, "connection_id", /no git connection with this id/],
      [{ ...configs.github, connection_id: membersGithub }, "connection_id", /no git connection with this id/],
      [{ ...configs.github, connection_id: gitlab }, "connection_id", /is to GitLab, but the config is for GitHub/],
      [{ ...configs.bitbucket, connection_id: github }, "connection_id", /is to GitHub, but the config is for Bitbucket/],
      [{ ...configs.github, access_token: gh.token }, "access_token", /comes from the git connection/],
      [{ ...configs.gitlab, gitlab_url: "https://gitlab.example.com" }, "gitlab_url", /comes from the git connection/],
      [{ ...configs.bitbucket, app_password: bb.appPassword }, "app_password", /comes from the git connection/],
      [{ ...configs.github, connection_id: "one" }, "connection_id", /one of your git connections/],
      [{ ...configs.github, owner: undefined }, "provider", /Give owner and repo/],
    ];
    for (const [config, field, message] of cases) {
      const res = await create(config);
      t.equal(res.status, 422, `${JSON.stringify(config)}: ${res.text}`);
      t.match(res.body, { code: "validation_failed", errors: { [`git_config.${field}`]: [message] } });
    }
    t.equal(await count(), before, "nothing was created");
    const env = (await create(configs.github)).body.environment;
    const moved = await client(app.url, member.token).put(`/api/environments/${env.id}`, { git_config: { ...configs.github, branch: "dev" } });
    t.equal(moved.status, 422, "a member may not re-point the owner's connection, even to the same repository");
    t.match(moved.body.errors, { "git_config.connection_id": [/no git connection with this id/] });
    t.equal((await client(app.url, member.token).put(`/api/environments/${env.id}`, { name: "Renamed by a member" })).status, 200, "other fields are theirs to change");
  });

  await t.test("GitHub: stored without a secret; the deployment opens a pull request with the connection's token", async (t) => {
    const res = await create(configs.github);
    t.equal(res.status, 201, res.text);
    t.match(res.body.environment.git_config, { provider: "github", connection_id: github, has_access_token: false });
    const tested = await api.post("/api/deployments/test-connection", { environment_id: res.body.environment.id });
    t.match(tested.body, { ok: true });
    const id = await startDeployment(app.url, token, { environment_id: res.body.environment.id, code_generation_id: generation });
    const done = await waitForDeployment(app.url, token, id);
    t.equal(done.status, "succeeded", JSON.stringify(done));
    t.equal(gh.pulls.length, 1);
    t.match(gh.repo.filesOf(gh.repo.branches.get(gh.pulls[0]!.head)!), files);
    const inline = await api.post("/api/deployments/test-connection", { git_config: configs.github });
    t.match(inline.body, { ok: true }, "an inline config may name the caller's connection");
    const foreign = await client(app.url, member.token).post("/api/deployments/test-connection", { git_config: configs.github });
    t.equal(foreign.status, 422, "but not someone else's");
    seen.push(res.body, tested.body, done, inline.body);
  });

  await t.test("GitLab: the OAuth token goes as a Bearer token; a merge request", async (t) => {
    const res = await create(configs.gitlab);
    t.equal(res.status, 201, res.text);
    const id = await startDeployment(app.url, token, { environment_id: res.body.environment.id, code_generation_id: generation });
    const done = await waitForDeployment(app.url, token, id);
    t.equal(done.status, "succeeded", JSON.stringify(done));
    t.equal(gl.mergeRequests.length, 1);
    seen.push(res.body, done);
  });

  await t.test("Bitbucket: a pull request, and a commit through the environment", async (t) => {
    const res = await create(configs.bitbucket);
    t.equal(res.status, 201, res.text);
    t.match(res.body.environment.git_config, { provider: "bitbucket", connection_id: bitbucket, has_app_password: false });
    const id = await startDeployment(app.url, token, { environment_id: res.body.environment.id, code_generation_id: generation });
    const done = await waitForDeployment(app.url, token, id);
    t.equal(done.status, "succeeded", JSON.stringify(done));
    t.equal(bb.pulls.length, 1);
    const commit = await api.post(`/api/projects/${project}/git/commit`, { code_generation_id: generation, environment_id: res.body.environment.id, branch: "generated", message: "Generated" });
    t.equal(commit.status, 202, commit.text);
    const committed = await waitForDeployment(app.url, token, commit.body.deployment.id);
    t.equal(committed.status, "succeeded", JSON.stringify(committed));
    t.match(bb.repo.filesOf(bb.repo.branches.get("generated")!), files);
    seen.push(res.body, done, committed);
  });

  await t.test("a removed connection fails the deployment with a clear message", async (t) => {
    const res = await create(configs.github);
    t.equal((await api.delete(`/api/git/connections/${github}`)).status, 200);
    const id = await startDeployment(app.url, token, { environment_id: res.body.environment.id, code_generation_id: generation });
    t.match(await waitForDeployment(app.url, token, id), { status: "failed", error_code: "invalid_config", error: /connection was removed/ });
  });

  await t.test("no OAuth token in any answer or table", async (t) => {
    const tokens = [...gh.oauth.accessTokens, ...gl.oauth.accessTokens, ...bb.oauth.accessTokens];
    t.ok(tokens.length >= 3);
    t.same(tokens.filter((s) => JSON.stringify(seen).includes(s)), []);
    t.same(await findSecrets(app.pool, tokens), []);
  });
});
