import { generateKeyPairSync } from "node:crypto";
import t from "tap";
import { base64url, exportJWK, importJWK, SignJWT, type JWK } from "jose";
import { hashPassword } from "../../shared/auth/passwords.ts";
import { deleteUser } from "../../shared/db/users.ts";
import { startTestApp } from "../support/app.ts";
import { buildUser } from "../support/factories.ts";
import { client, request } from "../support/http.ts";

const CLIENT = { client_id: "test-client", client_secret: "test-client-secret-0123456789" };

t.test("bearer tokens: forged ones are refused, revocation is immediate", async (t) => {
  const app = await startTestApp(t);
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
      ["wrong issuer", await signWithAttacker({ ...claims, iss: "https://evil.example" })],
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
    t.equal(await status(await sign({ ...claims, aud: "unknown-client" })), 401, "unknown audience");
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
