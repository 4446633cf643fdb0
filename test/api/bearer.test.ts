import { generateKeyPairSync } from "node:crypto";
import t, { type Test } from "tap";
import { base64url, exportJWK, importJWK, SignJWT, type JWK } from "jose";
import { z } from "zod";
import { hashPassword } from "../../shared/auth/passwords.ts";
import { createPersonalToken } from "../../shared/auth/personalTokens.ts";
import { sql } from "../../shared/db/pool.ts";
import { deleteUser } from "../../shared/db/users.ts";
import { enqueue } from "../../shared/jobs/enqueue.ts";
import { startTestApp } from "../support/app.ts";
import { buildProject, buildUser } from "../support/factories.ts";
import { client, request } from "../support/http.ts";
import { blogDdl, buildSchema, buildTemplate } from "../support/templateFactories.ts";
import { echoKind } from "../support/testTasks.ts";

const CLIENT = { client_id: "test-client", client_secret: "test-client-secret-0123456789" };

// One app (with a worker, for the routes that run jobs) for every test below: each test makes
// its own users and tokens, so what one revokes or changes no other test reads.
const app = await startTestApp(t, { worker: true });

t.test("bearer tokens: forged ones are refused, revocation is immediate", async (t) => {
  const password = "valid password 1";
  const user = await buildUser(app.pool, { passwordHash: await hashPassword(password) });
  const grant = async () => (await request(app.url, "POST", "/api/oauth/token", { body: { grant_type: "password", ...CLIENT, username: user.email, password } })).body;
  const valid = (await grant()).access_token as string;
  const status = async (token: string) => (await client(app.url, token).get("/api/user")).status;
  t.equal(await status(valid), 200, "the genuine token works");

  const [rawHeader, rawPayload] = valid.split(".") as [string, string, string];
  const header = JSON.parse(Buffer.from(rawHeader, "base64url").toString()) as Record<string, unknown>;
  const claims = JSON.parse(Buffer.from(rawPayload, "base64url").toString()) as Record<string, unknown>;
  const jwks = (await request(app.url, "GET", "/api/oauth/jwks")).body as { keys: JWK[] };
  const publicJwk = jwks.keys[0]!;
  const attacker = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const attackerKey = await importJWK(await exportJWK(attacker.privateKey), "RS256");
  const now = Math.floor(Date.now() / 1000);

  const signWithAttacker = (payload: Record<string, unknown>, extraHeader: Record<string, unknown> = {}) =>
    new SignJWT(payload).setProtectedHeader({ alg: "RS256", typ: "JWT", kid: header.kid as string, ...extraHeader }).sign(attackerKey);
  const encode = (value: unknown) => base64url.encode(JSON.stringify(value));

  t.test("forgeries", async (t) => {
    const hmacKey = Buffer.from(JSON.stringify(publicJwk));
    const hs256 = await new SignJWT(claims).setProtectedHeader({ alg: "HS256", typ: "JWT", kid: header.kid as string }).sign(hmacKey);
    const cases: [string, string][] = [
      ["alg none", `${encode({ alg: "none", typ: "JWT" })}.${rawPayload}.`],
      ["HS256 signed with the public key", hs256],
      ["signed by another key", await signWithAttacker(claims)],
      ["tampered payload", `${rawHeader}.${encode({ ...claims, sub: "999" })}.${valid.split(".")[2]}`],
      ["wrong audience", await signWithAttacker({ ...claims, aud: "someone-else" })],
      ["wrong issuer (and another key)", await signWithAttacker({ ...claims, iss: "https://evil.example" })],
      ["not a JWT", "definitely-not-a-token"],
      ["personal token shape, wrong secret", `1|${"a".repeat(40)}`],
      ["truncated", valid.slice(0, -10)],
    ];
    for (const [name, token] of cases) t.equal(await status(token), 401, name);
    t.equal((await request(app.url, "GET", "/api/user")).status, 401, "no token at all");
    const noBearer = await request(app.url, "GET", "/api/user", { headers: { authorization: `Basic ${valid}` } });
    t.equal(noBearer.status, 401, "not a Bearer scheme");
    t.same(noBearer.body, { message: "Unauthenticated.", code: "unauthenticated" });
  });

  t.test("the server's own key, but an invalid time window or typ", async (t) => {
    // Re-sign with the real key to prove the checks beyond the signature: mint through the
    // service's own keys, then alter the claims the way an attacker with a stolen key might.
    const { loadSigningKeys } = await import("../../api/oauth/keys.ts");
    const keys = await loadSigningKeys(app.pool, app.config.appKey, undefined);
    const sign = (payload: Record<string, unknown>, typ = "JWT") =>
      new SignJWT(payload).setProtectedHeader({ alg: "RS256", typ, kid: keys.signing.kid }).sign(keys.signing.key);
    t.equal(await status(await sign({ ...claims })), 200, "control: the same claims re-signed are accepted");
    t.equal(await status(await sign({ ...claims, exp: now - 60, iat: now - 3700, nbf: now - 3700 })), 401, "expired");
    t.equal(await status(await sign({ ...claims, nbf: now + 600 })), 401, "nbf in the future");
    t.equal(await status(await sign({ ...claims }, "at+jwt")), 401, "wrong typ");
    const noTyp = await new SignJWT({ ...claims }).setProtectedHeader({ alg: "RS256", kid: keys.signing.kid }).sign(keys.signing.key);
    t.equal(await status(noTyp), 401, "no typ");
    t.equal(await status(await sign({ ...claims, iss: "https://evil.example/api/oauth" })), 401, "wrong issuer");
    t.equal(await status(await sign({ ...claims, iss: undefined })), 401, "no issuer");
    t.equal(await status(await sign({ ...claims, aud: "unknown-client" })), 401, "unknown audience");
    t.equal(await status(await sign({ ...claims, aud: [claims.aud, "unknown-client"] })), 401, "a second audience");
    t.equal(await status(await sign({ ...claims, aud: undefined })), 401, "no audience");
    const other = await buildUser(app.pool);
    t.equal(await status(await sign({ ...claims, sub: String(other.id) })), 200, "control: another user's id with the real key");
    await deleteUser(app.pool, other.id);
    t.equal(await status(await sign({ ...claims, sub: String(other.id) })), 401, "a deleted user's token");
  });

  t.test("logout ends this token and its refresh token; logout-all ends every token", async (t) => {
    const session = await grant();
    const me = client(app.url, session.access_token);
    t.equal((await me.post("/api/logout")).status, 200);
    t.equal(await status(session.access_token), 401, "this access token stopped working");
    const refresh = await request(app.url, "POST", "/api/oauth/token", { body: { grant_type: "refresh_token", ...CLIENT, refresh_token: session.refresh_token } });
    t.equal(refresh.body.error, "invalid_grant", "its refresh token too");

    const a = await grant();
    const b = await grant();
    const login = (await request(app.url, "POST", "/api/auth/login", { body: { email: user.email, password } })).body.access_token as string;
    t.equal(await status(a.access_token), 200);
    t.equal((await client(app.url, b.access_token).post("/api/logout-all-devices")).status, 200);
    for (const token of [a.access_token, b.access_token, login, valid]) t.equal(await status(token), 401, "every earlier access token refused");
    const refreshed = await request(app.url, "POST", "/api/oauth/token", { body: { grant_type: "refresh_token", ...CLIENT, refresh_token: a.refresh_token } });
    t.equal(refreshed.body.error, "invalid_grant", "every refresh token refused");
    const fresh = await grant();
    t.equal(await status(fresh.access_token), 200, "a new login works right away");
  });
});

t.test("scopes: read-only tokens only read, admin routes need the admin scope", async (t) => {
  const password = "scoped password 1";
  const passwordHash = await hashPassword(password);
  const user = await buildUser(app.pool, { passwordHash, roles: ["developer"], name: "Reader" });
  const admin = await buildUser(app.pool, { passwordHash, roles: ["admin", "developer"] });
  const grant = async (username: string, scope: string) =>
    request(app.url, "POST", "/api/oauth/token", { body: { grant_type: "password", ...CLIENT, username, password, scope } });
  const personal = async (userId: number, abilities: string[]) => (await createPersonalToken(app.pool, userId, "scoped", { abilities })).plainText;
  const nameOf = async (id: number) => app.pool.oneFirst(sql.type(z.object({ name: z.string() }))`select name from users where id = ${id}`);

  const refusedForScope = (t: Test, res: { status: number; body: { code?: string; message?: string }; headers: Headers }, scope: string) => {
    t.equal(res.status, 403, `403 (${JSON.stringify(res.body)})`);
    t.equal(res.body.code, "insufficient_scope");
    t.match(res.body.message, new RegExp(`lacks the ${scope} scope`));
    t.match(res.headers.get("www-authenticate"), new RegExp(`error="insufficient_scope", scope="${scope}"`));
  };

  t.test("a read-only personal token reads, but cannot write", async (t) => {
    const api = client(app.url, await personal(user.id, ["read"]));
    t.equal((await api.get("/api/user")).status, 200, "GET works");
    refusedForScope(t, await api.put("/api/profile", { name: "Changed" }), "write");
    t.equal(await nameOf(user.id), "Reader", "nothing was written");
    refusedForScope(t, await api.delete("/api/user", { password }), "write");
    refusedForScope(t, await api.post("/api/api-tokens", { name: "escalate", abilities: ["*"] }), "write");
    const job = await app.pool.transaction((tx) => enqueue(tx, echoKind, { value: 1 }, { userId: user.id }));
    const channel = await api.post("/api/broadcasting/auth", { socket_id: "123.456", channel_name: `private-job.${job.id}` });
    t.equal(channel.status, 200, "channel authorization is a read");
    t.equal((await api.post("/api/logout")).status, 200, "logout is allowed to any valid token");
    t.equal((await api.get("/api/user")).status, 401, "and it ended the token");
  });

  t.test("an OAuth token requested with scope=read likewise", async (t) => {
    const res = await grant(user.email, "read");
    t.equal(res.status, 200, res.text);
    t.equal(res.body.scope, "read");
    const api = client(app.url, res.body.access_token);
    t.equal((await api.get("/api/user")).status, 200);
    refusedForScope(t, await api.put("/api/profile", { name: "Changed" }), "write");
    t.equal(await nameOf(user.id), "Reader", "nothing was written");
    const writer = client(app.url, (await grant(user.email, "read write")).body.access_token);
    t.equal((await writer.put("/api/profile", { name: "Reader" })).status, 200, "control: a write token may");
  });

  t.test("an administrator's token without the admin scope acts as a plain user", async (t) => {
    const stranger = await buildUser(app.pool);
    const projectId = await buildProject(app.pool, stranger.id);
    const narrow = await grant(admin.email, "read write");
    t.equal(narrow.body.scope, "read write");
    const api = client(app.url, narrow.body.access_token);
    refusedForScope(t, await api.get("/api/admin/users"), "admin");
    t.equal((await api.get(`/api/projects/${projectId}`)).status, 404, "the policies do not see the admin role either");
    t.equal((await api.put("/api/profile", { name: "Admin" })).status, 200, "ordinary writes work");
    refusedForScope(t, await api.post("/api/api-tokens", { name: "wider", abilities: ["*"] }), "admin");
    refusedForScope(t, await api.post("/api/api-tokens", { name: "wider", abilities: ["admin"] }), "admin");
    t.equal((await api.post("/api/api-tokens", { name: "same", abilities: ["read", "write"] })).status, 201, "abilities within its own scopes");
    const changed = await api.put("/api/profile/password", { current_password: password, password, password_confirmation: password });
    t.equal(changed.status, 200, changed.text);
    refusedForScope(t, await client(app.url, changed.body.access_token).get("/api/admin/users"), "admin");

    const full = client(app.url, (await grant(admin.email, "*")).body.access_token);
    t.equal((await full.get("/api/admin/users")).status, 200, "`*` includes admin for an administrator");
    t.equal((await full.get(`/api/projects/${projectId}`)).status, 200);
    t.equal((await client(app.url, await personal(admin.id, ["*"])).get("/api/admin/users")).status, 200, "a `*` personal token too");
    const plain = client(app.url, await personal(user.id, ["*"]));
    const notAdmin = await plain.get("/api/admin/users");
    t.equal(notAdmin.status, 403);
    t.equal(notAdmin.body.code, "forbidden", "a non-administrator is refused by role, not by scope");
  });

  t.test("personal-token abilities: validated, bounded by the roles and by the creating token", async (t) => {
    const api = client(app.url, await personal(user.id, ["*"]));
    const bad = await api.post("/api/api-tokens", { name: "bad", abilities: ["delete"] });
    t.equal(bad.status, 422, bad.text);
    t.match(JSON.stringify(bad.body.errors), /Each ability must be one of: \*, read, write, admin/);
    t.equal((await api.post("/api/api-tokens", { name: "bad", abilities: [] })).status, 422);
    t.equal((await api.post("/api/api-tokens", { name: "bad", abilities: ["read", "read"] })).status, 422);
    refusedForScope(t, await api.post("/api/api-tokens", { name: "admin", abilities: ["admin"] }), "admin");
    const writeOnly = await api.post("/api/api-tokens", { name: "writer", abilities: ["write"] });
    t.equal(writeOnly.status, 201, writeOnly.text);
    t.same(writeOnly.body.token.abilities, ["write"]);
    const writer = client(app.url, writeOnly.body.plainTextToken);
    t.equal((await writer.get("/api/user")).status, 200, "write includes read");
    t.equal((await writer.put("/api/profile/theme", { theme: "dark" })).status, 200);

    const adminToken = client(app.url, await personal(admin.id, ["*"]));
    t.equal((await adminToken.get("/api/admin/users")).status, 200);
    await app.pool.query(sql.type(z.object({}))`delete from user_roles where user_id = ${admin.id} and role = 'admin'`);
    t.equal((await adminToken.get("/api/admin/users")).status, 403, "a `*` token follows the roles: the admin role is gone");
  });
});

t.test("scopes: POST routes that only compute answer a read-only token; POST routes that write refuse it", async (t) => {
  const user = await buildUser(app.pool, { roles: ["developer"] });
  const project = await buildProject(app.pool, user.id);
  const [older, newer] = [await buildSchema(app.pool, project, user.id), await buildSchema(app.pool, project, user.id, `${blogDdl}\nCREATE TABLE tags (id SERIAL PRIMARY KEY);`, "blog 2")];
  const template = await buildTemplate(app.pool, { projectId: project }, user.id);
  const reader = client(app.url, (await createPersonalToken(app.pool, user.id, "reader", { abilities: ["read"] })).plainText);
  const writer = client(app.url, (await createPersonalToken(app.pool, user.id, "writer", { abilities: ["write"] })).plainText);
  const base = `/api/projects/${project}`;
  const written = async () =>
    app.pool.one(sql.type(z.object({ generations: z.number(), schemas: z.number(), projects: z.number() }))`
      select (select count(*) from code_generations)::int as generations, (select count(*) from schemas)::int as schemas, (select count(*) from projects)::int as projects`);

  const compare = await reader.post(`${base}/schemas/compare`, { schema_id_1: older, schema_id_2: newer });
  t.equal(compare.status, 200, compare.text);
  t.same(compare.body.differences.added_tables, ["tags"]);
  const compile = await reader.post(`${base}/templates/${template}/compile`);
  t.equal(compile.status, 200, compile.text);
  t.equal(compile.body.valid, true);
  const preview = await reader.post(`${base}/templates/${template}/preview`, { name: "world" });
  t.equal(preview.status, 200, preview.text);
  t.equal(preview.body.preview, "Hello world");
  const validate = await reader.post("/api/projects/import/validate", { format: "nothing we know" });
  t.equal(validate.status, 200, validate.text);
  t.equal(validate.body.valid, false);

  const before = await written();
  const refused = [
    await reader.post(`${base}/templates/${template}/execute`, { name: "world" }),
    await reader.post(`${base}/schemas`, { name: "more", database_type: "PostgreSQL", sql_text: blogDdl }),
    await reader.post(`${base}/templates/${template}/duplicate`, {}),
    await reader.post("/api/projects", { name: "Not allowed" }),
  ];
  for (const res of refused) {
    t.equal(res.status, 403, res.text);
    t.equal(res.body.code, "insufficient_scope");
  }
  t.same(await written(), before, "nothing was written");
  const executed = await writer.post(`${base}/templates/${template}/execute`, { name: "world" });
  t.equal(executed.status, 200, `control: a write token may (${executed.text})`);
  t.equal((await writer.post(`${base}/schemas/compare`, { schema_id_1: older, schema_id_2: newer })).status, 200, "write includes read");
});

t.test("personal tokens with an expiry: validated when made, refused once expired, listed as expired", async (t) => {
  const user = await buildUser(app.pool, { roles: ["developer"] });
  const api = client(app.url, (await createPersonalToken(app.pool, user.id, "maker")).plainText);
  const day = 86_400_000;
  const tokenCount = () => app.pool.oneFirst(sql.type(z.object({ count: z.number() }))`select count(*)::int as count from personal_access_tokens`);
  const before = await tokenCount();

  const invalid: [string, unknown, RegExp][] = [
    ["in the past", new Date(Date.now() - 60_000).toISOString(), /must be a time in the future/],
    ["more than a year ahead", new Date(Date.now() + 367 * day).toISOString(), /at most 366 days ahead/],
    ["without a time zone", "2030-01-01T00:00:00", /ISO 8601 date and time with a time zone/],
    ["not a date", "next week", /ISO 8601/],
  ];
  for (const [name, expires_at, message] of invalid) {
    const res = await api.post("/api/api-tokens", { name: "bot", expires_at });
    t.equal(res.status, 422, `${name}: ${res.text}`);
    t.match(res.body.errors.expires_at, [message], name);
  }
  t.equal(await tokenCount(), before, "no token was made");

  const expiresAt = new Date(Date.now() + 365 * day);
  const made = await api.post("/api/api-tokens", { name: "yearly", expires_at: expiresAt.toISOString() });
  t.equal(made.status, 201, made.text);
  t.equal(made.body.token.expires_at, expiresAt.toISOString());
  t.equal(made.body.token.is_expired, false);
  t.equal((await client(app.url, made.body.plainTextToken).get("/api/user")).status, 200, "a token before its expiry works");
  const forever = await api.post("/api/api-tokens", { name: "forever" });
  t.equal(forever.body.token.expires_at, null, "without expires_at a token does not expire");

  const lapsed = await createPersonalToken(app.pool, user.id, "lapsed", { expiresAt: new Date(Date.now() - 1000) });
  t.equal((await client(app.url, lapsed.plainText).get("/api/user")).status, 401, "an expired token does not authenticate");
  const soon = await createPersonalToken(app.pool, user.id, "soon", { expiresAt: new Date(Date.now() + 3_600_000) });
  const soonApi = client(app.url, soon.plainText);
  t.equal((await soonApi.get("/api/user")).status, 200);
  // Its expiry passes (moved, rather than slept past, so a slow machine changes nothing).
  await app.pool.query(sql.type(z.object({}))`update personal_access_tokens set expires_at = now() - interval '1 second' where name = 'soon' and user_id = ${user.id}`);
  t.equal((await soonApi.get("/api/user")).status, 401, "nor one that expired after it was used");

  const list = await api.get("/api/api-tokens");
  t.equal(list.status, 200);
  const byName = Object.fromEntries((list.body.data as { name: string; is_expired: boolean }[]).map((row) => [row.name, row.is_expired]));
  t.same(byName, { maker: false, yearly: false, forever: false, lapsed: true, soon: true }, "expired tokens are listed as expired");
});
