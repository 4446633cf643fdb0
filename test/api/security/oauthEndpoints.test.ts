/**
 * The OAuth server serves only what the service uses: the token, revocation, JWKS and
 * discovery endpoints. oidc-provider's browser sign-in endpoints were on by default: an
 * anonymous GET of the logout page (`/session/end`) wrote a Session row to `oauth_models`
 * and answered an auto-submitting HTML form from the API's origin; pushed authorization
 * requests and userinfo were advertised although no client could use them.
 */
import t from "tap";
import { z } from "zod";
import { sql } from "../../../shared/db/pool.ts";
import { startTestApp } from "../../support/app.ts";
import { request } from "../../support/http.ts";

const CLIENT_ID = "test-client";
const CLIENT_SECRET = "test-client-secret-0123456789";

t.test("unused OAuth endpoints are off", async (t) => {
  const app = await startTestApp(t);
  const rows = () => app.pool.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from oauth_models`);
  const before = await rows();

  const discovery = await request(app.url, "GET", "/api/oauth/.well-known/openid-configuration");
  t.equal(discovery.status, 200, discovery.text);
  for (const field of ["end_session_endpoint", "pushed_authorization_request_endpoint", "userinfo_endpoint"]) {
    t.notOk(field in discovery.body, `discovery does not advertise ${field}`);
  }
  t.ok(discovery.body.token_endpoint && discovery.body.revocation_endpoint && discovery.body.jwks_uri, "what the service uses stays advertised");

  for (let i = 0; i < 3; i += 1) {
    const logout = await request(app.url, "GET", "/api/oauth/session/end");
    t.equal(logout.status, 404, `the logout page is gone (${logout.text.slice(0, 80)})`);
    t.equal(logout.body?.error, "not_found", "answered as a JSON OAuth error");
    t.notOk(logout.headers.get("set-cookie"), "and sets no cookie");
  }
  const pushed = await request(app.url, "POST", "/api/oauth/request", { body: { client_id: CLIENT_ID, client_secret: CLIENT_SECRET, response_type: "none", scope: "read" } });
  t.equal(pushed.status, 404, pushed.text);
  t.equal((await request(app.url, "GET", "/api/oauth/me")).status, 404);
  t.equal(await rows(), before, "anonymous requests wrote nothing to oauth_models");
});
