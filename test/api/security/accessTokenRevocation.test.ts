/**
 * RFC 7009 at the discovery document's `revocation_endpoint`: an access token a client
 * revokes stops working at once. oidc-provider refused to revoke its JWT access tokens (400
 * `unsupported_token_type`) and the token kept working for its hour; only refresh tokens were
 * revocable. A realtime subscription made with the token ends with it.
 */
import t from "tap";
import * as oidc from "openid-client";
import { createClient } from "../../../shared/auth/clients.ts";
import { hashPassword } from "../../../shared/auth/passwords.ts";
import { startTestApp } from "../../support/app.ts";
import { buildUser } from "../../support/factories.ts";
import { client, request } from "../../support/http.ts";
import { connectPusher } from "../../support/pusher.ts";

const CLIENT_ID = "test-client";
const CLIENT_SECRET = "test-client-secret-0123456789";
const KEY = "test-app-key";

t.test("revoking an access token at the revocation endpoint", async (t) => {
  const app = await startTestApp(t);
  const password = "revocation password";
  const user = await buildUser(app.pool, { passwordHash: await hashPassword(password) });
  const partner = await createClient(app.pool, app.config, { name: "Partner integration" });
  const issuer = `${app.url}/api/oauth`;
  const signIn = async () => {
    const res = await request(app.url, "POST", "/api/oauth/token", {
      body: { grant_type: "password", client_id: CLIENT_ID, client_secret: CLIENT_SECRET, username: user.email, password, scope: "*" },
    });
    t.equal(res.status, 200, res.text);
    return res.body as { access_token: string; refresh_token: string };
  };
  const revoke = (token: string, clientId = CLIENT_ID, clientSecret = CLIENT_SECRET) =>
    request(app.url, "POST", "/api/oauth/token/revocation", { body: { client_id: clientId, client_secret: clientSecret, token } });
  const status = async (bearer: string) => (await request(app.url, "GET", "/api/user", { token: bearer })).status;

  t.test("openid-client revokes a password grant's access token; its refresh token still works", async (t) => {
    const config = await oidc.discovery(new URL(issuer), CLIENT_ID, CLIENT_SECRET, undefined, { execute: [oidc.allowInsecureRequests] });
    t.ok(config.serverMetadata().revocation_endpoint, "the endpoint is advertised");
    const tokens = await signIn();
    t.equal(await status(tokens.access_token), 200);
    await oidc.tokenRevocation(config, tokens.access_token, { token_type_hint: "access_token" });
    t.equal(await status(tokens.access_token), 401, "the revoked access token is refused");
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token);
    t.equal(await status(refreshed.access_token), 200, "the session goes on with a new access token");
  });

  t.test("JSON as the spec sends token requests; revoking twice answers 200 again", async (t) => {
    const tokens = await signIn();
    const first = await revoke(tokens.access_token);
    t.equal(first.status, 200, first.text);
    t.equal(first.text, "");
    t.equal(await status(tokens.access_token), 401);
    t.equal((await revoke(tokens.access_token)).status, 200, "an already revoked token is not an error");
  });

  t.test("a first-party token from /auth/login is revoked by the first-party client", async (t) => {
    const login = await request(app.url, "POST", "/api/auth/login", { body: { email: user.email, password } });
    t.equal(login.status, 200, login.text);
    const token = login.body.access_token as string;
    t.equal(await status(token), 200);
    t.equal((await revoke(token)).status, 200);
    t.equal(await status(token), 401);
  });

  t.test("only the token's own client, authenticated, revokes it", async (t) => {
    const tokens = await signIn();
    const wrongSecret = await revoke(tokens.access_token, CLIENT_ID, "not-the-secret-at-all");
    t.equal(wrongSecret.status, 400, wrongSecret.text);
    t.equal(wrongSecret.body.error, "invalid_client");
    const noSecret = await request(app.url, "POST", "/api/oauth/token/revocation", { body: { client_id: CLIENT_ID, token: tokens.access_token } });
    t.equal(noSecret.status, 400, noSecret.text);
    t.equal(noSecret.body.error, "invalid_client");
    const foreign = await revoke(tokens.access_token, partner.clientId, partner.clientSecret);
    t.equal(foreign.status, 400, foreign.text);
    t.equal(foreign.body.error, "invalid_request");
    t.equal(await status(tokens.access_token), 200, "the token still works after the refused attempts");
  });

  t.test("a token that is not valid answers 200 and revokes nothing (RFC 7009 §2.2)", async (t) => {
    const tokens = await signIn();
    const [header, payload] = tokens.access_token.split(".");
    const forged = `${header}.${payload}.${"A".repeat(342)}`;
    const res = await revoke(forged);
    t.equal(res.status, 200, res.text);
    t.equal(await status(tokens.access_token), 200, "a forged signature revokes nothing");
  });

  t.test("a realtime subscription made with the token ends when the client revokes it", async (t) => {
    const tokens = await signIn();
    const api = client(app.url, tokens.access_token);
    const project = (await api.post("/api/projects", { name: "Watched" })).body.project;
    const board = (await api.post(`/api/projects/${project.id}/kanban`, { name: "Live", columns: ["A"] })).body.board;
    const pusher = await connectPusher(t, app.url, KEY, tokens.access_token);
    const channel = await pusher.subscribe(`private-kanban-board.${board.id}`);
    const ended = pusher.next<{ status?: number }>(channel, "pusher:subscription_error", 30_000);
    t.equal((await revoke(tokens.access_token)).status, 200);
    t.equal((await ended).status, 403, "the subscription is ended with 403");
  });

  t.test("a closed account's token answers 200, as any token that no longer works does", async (t) => {
    const closing = await buildUser(app.pool, { passwordHash: await hashPassword(password) });
    const signedIn = await request(app.url, "POST", "/api/oauth/token", {
      body: { grant_type: "password", client_id: CLIENT_ID, client_secret: CLIENT_SECRET, username: closing.email, password, scope: "*" },
    });
    const token = signedIn.body.access_token as string;
    const closed = await request(app.url, "DELETE", "/api/user", { token, body: { password } });
    t.equal(closed.status, 200, closed.text);
    const res = await revoke(token);
    t.equal(res.status, 200, res.text);
  });

  t.test("revoking a refresh token still goes to oidc-provider and ends the session", async (t) => {
    const tokens = await signIn();
    t.equal((await revoke(tokens.refresh_token)).status, 200);
    t.equal(await status(tokens.access_token), 401);
  });
});
