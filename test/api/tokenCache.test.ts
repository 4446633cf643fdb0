/**
 * Bearer authentication remembers tokens that passed the revocation checks (so a request
 * costs one read of the user's row); revocation must still be immediate, in the process that
 * revoked and in every other one, without waiting for a notification. Two web processes on
 * one database: tokens are remembered in B, revoked through A (or by plain SQL), and the very
 * next request to B is refused.
 */
import t, { type Test } from "tap";
import { z } from "zod";
import { hashPassword } from "../../shared/auth/passwords.ts";
import { sql } from "../../shared/db/pool.ts";
import { startTestApp, type TestApp } from "../support/app.ts";
import { buildUser, buildUserWithToken } from "../support/factories.ts";
import { client, request } from "../support/http.ts";

const CLIENT = { client_id: "test-client", client_secret: "test-client-secret-0123456789" };

t.test("remembered tokens: revocation is still immediate in every process", async (t) => {
  const a = await startTestApp(t);
  // A second web process on the same data and issuer (a deployment behind one URL).
  const b = await startTestApp(t, { db: a.db, env: { APP_URL: a.config.appUrl } });
  const password = "a long enough password";
  const admin = await buildUserWithToken(a.pool, { roles: ["admin", "super_admin"] });

  const passwordHash = await hashPassword(password);
  const newUser = () => buildUser(a.pool, { passwordHash });
  const oauthTokens = async (email: string) => {
    const res = await request(a.url, "POST", "/api/oauth/token", { body: { grant_type: "password", ...CLIENT, username: email, password, scope: "*" } });
    if (res.status !== 200) throw new Error(res.text);
    return res.body as { access_token: string; refresh_token: string };
  };
  const loginToken = async (email: string) => {
    const res = await request(a.url, "POST", "/api/auth/login", { body: { email, password } });
    if (res.status !== 200) throw new Error(res.text);
    return res.body.access_token as string;
  };
  const status = async (app: TestApp, token: string) => (await client(app.url, token).get("/api/user")).status;
  /** Uses the token on B until B remembers it (the second request onward is served from memory). */
  const rememberedInB = async (t: Test, token: string) => {
    const before = b.deps.identity.passedTokens.size;
    t.equal(await status(b, token), 200, "accepted by B");
    t.equal(b.deps.identity.passedTokens.size, before + 1, "B remembers the token");
    t.equal(await status(b, token), 200, "accepted by B from memory");
  };

  t.test("POST /logout through A: B refuses the token on the next request", async (t) => {
    const user = await newUser();
    for (const token of [await loginToken(user.email), (await oauthTokens(user.email)).access_token]) {
      await rememberedInB(t, token);
      t.equal((await client(a.url, token).post("/api/logout")).status, 200);
      t.equal(await status(b, token), 401, "B refuses it at once");
      t.equal(await status(a, token), 401, "and so does A");
    }
  });

  t.test("a replayed refresh token ends the grant: its access token, remembered in B, stops at once", async (t) => {
    const user = await newUser();
    const first = await oauthTokens(user.email);
    await rememberedInB(t, first.access_token);
    const refresh = (token: string) => request(a.url, "POST", "/api/oauth/token", { body: { grant_type: "refresh_token", ...CLIENT, refresh_token: token } });
    t.equal((await refresh(first.refresh_token)).status, 200, "the rotation");
    t.equal(await status(b, first.access_token), 200, "a rotation alone ends no access token");
    t.equal((await refresh(first.refresh_token)).status, 400, "the replay");
    t.equal(await status(b, first.access_token), 401, "B refuses the grant's access token at once");
  });

  t.test("a disabled account, logout from all devices and a revocation by plain SQL", async (t) => {
    const disabled = await newUser();
    const jwt = (await oauthTokens(disabled.email)).access_token;
    await rememberedInB(t, jwt);
    const res = await client(a.url, admin.token).put(`/api/admin/users/${disabled.id}`, { disabled_at: new Date().toISOString() });
    t.equal(res.status, 200, res.text);
    t.equal(await status(b, jwt), 401, "a disabled account's remembered token is refused at once");

    const everywhere = await newUser();
    const tokens = [(await oauthTokens(everywhere.email)).access_token, await loginToken(everywhere.email)];
    for (const token of tokens) await rememberedInB(t, token);
    t.equal((await client(a.url, tokens[1]).post("/api/logout-all-devices")).status, 200);
    for (const token of tokens) t.equal(await status(b, token), 401, "logout from all devices reaches remembered tokens");

    const bySql = await newUser();
    const token = await loginToken(bySql.email);
    await rememberedInB(t, token);
    const claims = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString()) as { jti: string; exp: number };
    await a.pool.query(sql.type(z.object({}))`
      insert into revoked_access_tokens (jti, user_id, expires_at) values (${claims.jti}, ${bySql.id}, to_timestamp(${claims.exp}))`);
    t.equal(await status(b, token), 401, "a revocation written by another program is seen at once too");
  });

  t.test("another user's revocation leaves a remembered token alone", async (t) => {
    const keeper = await newUser();
    const other = await newUser();
    const kept = await loginToken(keeper.email);
    await rememberedInB(t, kept);
    t.equal((await client(a.url, await loginToken(other.email)).post("/api/logout")).status, 200);
    t.equal(await status(b, kept), 200);
    t.equal(await status(a, kept), 200);
  });
});
