/**
 * Git provider sign-in against local stand-ins of GitHub's, GitLab's and Bitbucket's
 * authorization servers (and their `/user` APIs, through Octokit, Gitbeaker and fetch):
 * the authorization URL with state and PKCE where the host supports it, the callback bound to
 * the user who started it, state and code each usable once, a refused code, a user who
 * declines, an expiring GitLab token refreshed before use, connections listed and deleted by
 * their owner only, a self-hosted GitLab on a private address refused by the network guard,
 * and no token or client secret in any answer, log line or row.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { connectionAccess } from "../../../shared/git/signIn.ts";
import { startTestApp } from "../../support/app.ts";
import { findSecrets, recordingClient } from "../../support/deploymentFactories.ts";
import { buildUserWithToken } from "../../support/factories.ts";
import { startBitbucketStandIn } from "../../support/peers/bitbucketPeer.ts";
import { startGithubStandIn } from "../../support/peers/githubPeer.ts";
import { startGitlabStandIn } from "../../support/peers/gitlabPeer.ts";

/** Plays the user's browser at the provider: opens the authorization URL, answers where it redirects. */
async function consent(authorizationUrl: string): Promise<URL> {
  const res = await fetch(authorizationUrl, { redirect: "manual" });
  if (res.status !== 302) throw new Error(`authorize answered ${res.status}: ${await res.text()}`);
  return new URL(res.headers.get("location")!);
}

t.test("git provider sign-in", async (t) => {
  const gh = await startGithubStandIn();
  const gl = await startGitlabStandIn();
  const bb = await startBitbucketStandIn();
  t.teardown(() => Promise.all([gh.close(), gl.close(), bb.close()]));
  const lines: string[] = [];
  const app = await startTestApp(t, {
    logLines: lines,
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
      FRONTEND_URL: "https://app.example.test",
    },
  });
  const answers: string[] = [];
  const alice = await buildUserWithToken(app.pool);
  const mallory = await buildUserWithToken(app.pool);
  const api = recordingClient(app.url, alice.token, answers);
  const other = recordingClient(app.url, mallory.token, answers);
  const hosts = [
    { provider: "github", peer: gh, pkce: true, login: "octo-dev" },
    { provider: "gitlab", peer: gl, pkce: true, login: "lab-dev" },
    { provider: "bitbucket", peer: bb, pkce: false, login: "bucket-dev" },
  ] as const;
  const connections: Record<string, number> = {};

  for (const { provider, peer, pkce, login } of hosts) {
    await t.test(`${provider}: authorize, consent, callback`, async (t) => {
      const started = await api.get(`/api/git/${provider}/authorize`);
      t.equal(started.status, 200, started.text);
      t.equal(started.headers.get("cache-control"), "no-store");
      const url = new URL(started.body.authorization_url);
      t.equal(url.origin, peer.url);
      t.equal(url.searchParams.get("client_id"), peer.oauth.clientId);
      t.equal(url.searchParams.get("state"), started.body.state);
      t.equal(url.searchParams.get("redirect_uri"), `https://app.example.test/git/${provider}/callback`);
      t.equal(started.body.pkce, pkce);
      t.equal(url.searchParams.get("code_challenge_method"), pkce ? "S256" : null, pkce ? "PKCE where the host supports it" : "no PKCE at Bitbucket");
      t.equal(url.searchParams.has("code_challenge"), pkce);

      const back = await consent(started.body.authorization_url);
      const code = back.searchParams.get("code")!;
      const state = back.searchParams.get("state")!;
      t.equal(state, started.body.state);

      const stolen = await other.get(`/api/git/${provider}/callback?code=${code}&state=${state}`);
      t.equal(stolen.status, 422, "another user cannot finish the sign-in");
      t.equal(stolen.body.code, "oauth_state_invalid");
      const forged = await api.get(`/api/git/${provider}/callback?code=${code}&state=not-the-state`);
      t.equal(forged.status, 422, "a state mismatch is refused");
      t.match(forged.body, { code: "oauth_state_invalid", errors: { state: [/unknown, expired, already used/] } });
      t.equal(peer.oauth.tokenRequests.length, 0, "the code was not spent on refused callbacks");

      const done = await api.get(`/api/git/${provider}/callback?code=${code}&state=${state}`);
      t.equal(done.status, 201, done.text);
      t.match(done.body.connection, { provider, instance_url: peer.url, account: { login }, has_refresh_token: provider !== "github" });
      connections[provider] = done.body.connection.id;
      t.same(peer.oauth.tokenRequests, [{ grant: "authorization_code", status: 200 }]);

      const replay = await api.get(`/api/git/${provider}/callback?code=${code}&state=${state}`);
      t.equal(replay.status, 422, "the state works once");
      t.equal(replay.body.code, "oauth_state_invalid");

      const again = await api.get(`/api/git/${provider}/authorize`);
      const reused = await api.get(`/api/git/${provider}/callback?code=${code}&state=${again.body.state}`);
      t.equal(reused.status, 422, "a reused code is refused by the provider");
      t.match(reused.body, { code: "oauth_code_rejected", errors: { code: [/refused the authorization code/] } });
      t.equal(peer.oauth.tokenRequests.at(-1)!.error, provider === "github" ? "bad_verification_code" : "invalid_grant");
    });
  }

  await t.test("a declined authorization and bad input", async (t) => {
    const started = await api.get("/api/git/gitlab/authorize");
    const declined = await api.get(`/api/git/gitlab/callback?error=access_denied&error_description=The+user+denied&state=${started.body.state}`);
    t.equal(declined.status, 422);
    t.match(declined.body, { code: "oauth_denied", message: /access_denied: The user denied/ });
    t.equal((await api.get("/api/git/sourcehut/authorize")).status, 404, "an unknown provider is no route");
    t.equal((await api.get("/api/git/github/callback?code=x")).status, 422, "no state");
    t.equal((await fetch(`${app.url}/api/git/github/authorize`)).status, 401);
  });

  await t.test("connections: listed without tokens, refreshed before use, deleted by their owner", async (t) => {
    const list = await api.get("/api/git/connections");
    t.same(list.body.data.map((c: { provider: string }) => c.provider).sort(), ["bitbucket", "github", "gitlab"]);
    t.same((await other.get("/api/git/connections")).body.data, [], "nobody else's");
    for (const connection of list.body.data) t.notOk(Object.keys(connection).some((key) => /token|secret/.test(key) && key !== "has_refresh_token"));

    // The GitLab token is about to expire: the worker-side access renews it first.
    await app.pool.query(sql.type(z.object({}))`update git_connections set expires_at = now() + interval '1 minute' where id = ${connections.gitlab!}`);
    const before = gl.oauth.tokenRequests.length;
    const access = await connectionAccess(app.pool, app.config, connections.gitlab!);
    t.same(gl.oauth.tokenRequests.slice(before), [{ grant: "refresh_token", status: 200 }]);
    t.ok(gl.oauth.accessTokens.has(access.token), "the renewed token is one the host accepts");
    t.equal(access.apiBase, gl.url);
    t.ok(access.connection.expires_at!.getTime() > Date.now() + 3600_000, "and its new expiry is stored");
    const again = await connectionAccess(app.pool, app.config, connections.gitlab!);
    t.equal(again.token, access.token, "no second refresh while it is fresh");

    t.equal((await other.delete(`/api/git/connections/${connections.github!}`)).status, 404);
    t.equal((await api.delete(`/api/git/connections/${connections.github!}`)).status, 200);
    t.equal((await api.delete(`/api/git/connections/${connections.github!}`)).status, 404);
    t.equal((await api.get("/api/git/connections")).body.data.length, 2);
  });

  await t.test("no token or client secret in any answer, log line or row", async (t) => {
    const secrets = [gh, gl, bb].flatMap((peer) => [...peer.oauth.issued, peer.oauth.clientSecret]);
    t.ok(secrets.length >= 10, `${secrets.length} secrets`);
    t.ok(lines.length > 20, `${lines.length} log lines`);
    const leaks = (texts: string[]) => secrets.flatMap((secret) => texts.filter((text) => text.includes(secret)).map((text) => `${secret.slice(0, 8)}… in ${text.slice(0, 160)}`));
    t.same(leaks(lines), [], "no log line");
    t.same(leaks(answers), [], `none of the ${answers.length} answers`);
    t.same(await findSecrets(app.pool, secrets), [], "no row holds one in the clear");
  });
});

t.test("a self-hosted GitLab on a private address is refused unless allowed", async (t) => {
  const gl = await startGitlabStandIn();
  t.teardown(() => gl.close());
  const app = await startTestApp(t, {
    env: { GITLAB_CLIENT_ID: gl.oauth.clientId, GITLAB_CLIENT_SECRET: gl.oauth.clientSecret, GITLAB_URL: gl.url, ALLOW_PRIVATE_NETWORK_TARGETS: "false" },
  });
  const { token } = await buildUserWithToken(app.pool);
  const res = await recordingClient(app.url, token, []).get("/api/git/gitlab/authorize");
  t.equal(res.status, 422);
  t.match(res.body, { code: "network_target_refused", message: /Refused to connect to 127\.0\.0\.1/ });
  t.equal(gl.requests.length, 0, "nothing reached the address");
  t.equal((await recordingClient(app.url, token, []).get("/api/git/github/authorize")).status, 404, "a provider without an OAuth app is off");
});
