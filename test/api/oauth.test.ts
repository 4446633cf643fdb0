import t from "tap";
import * as oidc from "openid-client";
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import { hashPassword } from "../../shared/auth/passwords.ts";
import { startTestApp } from "../support/app.ts";
import { buildUser } from "../support/factories.ts";
import { client, request } from "../support/http.ts";

const CLIENT_ID = "test-client";
const CLIENT_SECRET = "test-client-secret-0123456789";

t.test("OAuth token endpoint", async (t) => {
  const app = await startTestApp(t);
  const password = "correct horse battery";
  const user = await buildUser(app.pool, { passwordHash: await hashPassword(password), email: "Oauth.User@Example.test" });
  const issuer = `${app.url}/api/oauth`;

  t.test("discovery and JWKS are published", async (t) => {
    const res = await request(app.url, "GET", "/api/oauth/.well-known/openid-configuration");
    t.equal(res.status, 200, res.text.slice(0, 300));
    t.equal(res.body?.issuer, issuer);
    const jwks = await request(app.url, "GET", "/api/oauth/jwks");
    t.equal(jwks.status, 200, jwks.text.slice(0, 300));
    t.equal(jwks.body?.keys?.[0]?.kty, "RSA");
    t.notOk(jwks.body?.keys?.[0]?.d, "no private part");
  });

  t.test("openid-client performs the password and refresh grants; tokens verify against the JWKS", async (t) => {
    const config = await oidc.discovery(new URL(issuer), CLIENT_ID, CLIENT_SECRET, undefined, { execute: [oidc.allowInsecureRequests] });
    const tokens = await oidc.genericGrantRequest(config, "password", { username: "oauth.user@example.test", password, scope: "*" });
    t.equal(tokens.token_type.toLowerCase(), "bearer");
    t.equal(tokens.expires_in, 3600);
    t.ok(tokens.refresh_token);
    const header = decodeProtectedHeader(tokens.access_token);
    t.equal(header.alg, "RS256");
    t.equal(header.typ, "JWT");
    const jwks = createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri!));
    const { payload } = await jwtVerify(tokens.access_token, jwks, { issuer, audience: CLIENT_ID });
    t.equal(payload.sub, String(user.id));
    t.equal(payload.scope, "read write");
    for (const claim of ["jti", "iat", "exp", "nbf"]) t.ok(payload[claim] !== undefined, `claim ${claim}`);
    t.equal(payload.exp! - payload.iat!, 3600);

    const api = client(app.url, tokens.access_token);
    t.equal((await api.get("/api/jobs")).status, 200, "the access token works on a bearer route");

    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    t.ok(refreshed.access_token && refreshed.refresh_token);
    t.not(refreshed.refresh_token, tokens.refresh_token, "the refresh token rotated");
    t.equal((await client(app.url, refreshed.access_token).get("/api/jobs")).status, 200);

    // Reusing the rotated-away refresh token revokes the whole family.
    const oauthError = (promise: Promise<unknown>) => promise.then(() => "no error", (e: { error?: string }) => e.error);
    t.equal(await oauthError(oidc.refreshTokenGrant(config, tokens.refresh_token!)), "invalid_grant", "replay refused");
    t.equal(await oauthError(oidc.refreshTokenGrant(config, refreshed.refresh_token!)), "invalid_grant", "the newest one is dead too");
    // The session ends with it: the family's access tokens stop working, not only its refresh tokens.
    t.equal((await client(app.url, tokens.access_token).get("/api/jobs")).status, 401, "the first access token is revoked");
    t.equal((await client(app.url, refreshed.access_token).get("/api/jobs")).status, 401, "and the one the rotation issued");
  });

  t.test("JSON bodies as the spec shows them", async (t) => {
    const res = await request(app.url, "POST", "/api/oauth/token", {
      body: { grant_type: "password", client_id: CLIENT_ID, client_secret: CLIENT_SECRET, username: user.email, password, scope: "*" },
    });
    t.equal(res.status, 200, res.text);
    t.equal(res.body.token_type, "Bearer");
    t.equal(res.body.expires_in, 3600);
    const refresh = await request(app.url, "POST", "/api/oauth/token", {
      body: { grant_type: "refresh_token", client_id: CLIENT_ID, client_secret: CLIENT_SECRET, refresh_token: res.body.refresh_token, scope: "*" },
    });
    t.equal(refresh.status, 200, refresh.text);
    t.ok(refresh.body.access_token);
  });

  t.test("wrong client, secret, grant or password answer 400 with an OAuth error", async (t) => {
    const base = { grant_type: "password", client_id: CLIENT_ID, client_secret: CLIENT_SECRET, username: user.email, password };
    const cases: [string, Record<string, string>, string][] = [
      ["wrong secret", { ...base, client_secret: "nope-nope-nope-nope" }, "invalid_client"],
      ["unknown client", { ...base, client_id: "nobody" }, "invalid_client"],
      ["disabled grant", { ...base, grant_type: "client_credentials" }, "unsupported_grant_type"],
      ["made-up grant", { ...base, grant_type: "magic" }, "unsupported_grant_type"],
      ["wrong password", { ...base, password: "wrong password!" }, "invalid_grant"],
      ["unknown user", { ...base, username: "ghost@example.test" }, "invalid_grant"],
      ["scope beyond the user", { ...base, scope: "admin" }, "invalid_scope"],
      ["bad refresh token", { grant_type: "refresh_token", client_id: CLIENT_ID, client_secret: CLIENT_SECRET, refresh_token: "garbage" }, "invalid_grant"],
    ];
    for (const [name, body, error] of cases) {
      const res = await request(app.url, "POST", "/api/oauth/token", { body });
      t.equal(res.status, 400, `${name}: 400 (${res.text})`);
      t.equal(res.body?.error, error, `${name}: ${error}`);
    }
  });

  t.test("a NUL character in a parameter answers 400 invalid_request, not a 500, and counts no attempt", async (t) => {
    const base = { grant_type: "password", client_id: CLIENT_ID, client_secret: CLIENT_SECRET, username: user.email, password, scope: "*" };
    const refresh = { grant_type: "refresh_token", client_id: CLIENT_ID, client_secret: CLIENT_SECRET, refresh_token: "garbage" };
    const cases: [string, Record<string, string>][] = [
      ["username", { ...base, username: "a\u0000b" }],
      ["username after the address", { ...base, username: `${user.email}\u0000` }],
      ["password", { ...base, password: `${password}\u0000` }],
      ["scope", { ...base, scope: "read\u0000" }],
      ["otp", { ...base, otp: "123456\u0000" }],
      ["client_id", { ...base, client_id: "test\u0000client" }],
      ["client_secret", { ...base, client_secret: `${CLIENT_SECRET}\u0000` }],
      ["refresh_token", { ...refresh, refresh_token: "garbage\u0000token" }],
    ];
    for (const [name, body] of cases) {
      for (const form of [false, true]) {
        const res = form
          ? await request(app.url, "POST", "/api/oauth/token", { body: new URLSearchParams(body).toString(), raw: true, headers: { "content-type": "application/x-www-form-urlencoded" } })
          : await request(app.url, "POST", "/api/oauth/token", { body });
        t.equal(res.status, 400, `${name} (${form ? "form" : "JSON"}): 400 (${res.text})`);
        t.equal(res.body?.error, "invalid_request", `${name} (${form ? "form" : "JSON"}): invalid_request`);
      }
    }
    // None of them was a failed login: the right password still signs in at once.
    const res = await request(app.url, "POST", "/api/oauth/token", { body: base });
    t.equal(res.status, 200, res.text);
  });

  t.test("one refresh token presented several times at once rotates once; the others are reuses that end the family", async (t) => {
    const token = (body: Record<string, string>) => request(app.url, "POST", "/api/oauth/token", { body: { client_id: CLIENT_ID, client_secret: CLIENT_SECRET, ...body } });
    for (let round = 0; round < 3; round += 1) {
      const signedIn = await token({ grant_type: "password", username: user.email, password, scope: "*" });
      t.equal(signedIn.status, 200, signedIn.text);
      const both = await Promise.all([0, 1, 2, 3].map(() => token({ grant_type: "refresh_token", refresh_token: signedIn.body.refresh_token })));
      const won = both.filter((r) => r.status === 200);
      t.equal(won.length, 1, `round ${round}: one rotation, not ${won.length} (${both.map((r) => r.status).join(", ")})`);
      for (const lost of both.filter((r) => r.status !== 200)) t.equal(lost.body.error, "invalid_grant", lost.text);
      // The second presentation is a reuse, answered as a later one is: the whole family ends.
      const next = await token({ grant_type: "refresh_token", refresh_token: won[0]!.body.refresh_token });
      t.equal(next.body.error, "invalid_grant", `round ${round}: the winner's refresh token is revoked with its grant`);
      t.equal((await client(app.url, won[0]!.body.access_token).get("/api/user")).status, 401, "and so is its access token");
    }
  });
});
