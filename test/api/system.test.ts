import t from "tap";
import { startTestApp } from "../support/app.ts";
import { client, request } from "../support/http.ts";

t.test("system routes", async (t) => {
  const app = await startTestApp(t, { worker: true });
  const api = client(app.url);

  t.test("GET /api/health reports database, queue and realtime", async (t) => {
    const res = await api.get("/api/health");
    t.equal(res.status, 200);
    t.equal(res.body.database.ok, true);
    t.equal(res.body.queue.workers, 1, "the in-process worker heartbeats");
    t.equal(res.body.realtime.listening, true);
    t.equal(res.body.status, "ok");
    t.match(res.headers.get("x-request-id"), /^[0-9a-f-]{36}$/);
  });

  t.test("a sane client request id is echoed", async (t) => {
    const res = await api.get("/api/health", undefined, { headers: { "x-request-id": "trace-abc-123" } });
    t.equal(res.headers.get("x-request-id"), "trace-abc-123");
  });

  t.test("unknown route and wrong method answer JSON", async (t) => {
    const missing = await api.get("/api/definitely-not-here");
    t.equal(missing.status, 404);
    t.same(missing.body, { message: "No route for GET /api/definitely-not-here.", code: "not_found" });
    const wrongMethod = await api.delete("/api/health");
    t.equal(wrongMethod.status, 405);
    t.equal(wrongMethod.body.code, "method_not_allowed");
  });

  t.test("requests under /api that no route takes count against the IP budget; health, metrics and docs are unlimited", async (t) => {
    const remaining = (res: { headers: Headers }) => Number(res.headers.get("x-ratelimit-remaining"));
    const first = await api.get("/api/realtime/config");
    t.equal(first.headers.get("x-ratelimit-limit"), "100000", "a public route carries the headers");
    const missing = await api.get("/api/no-such-route");
    t.equal(missing.status, 404);
    t.equal(missing.headers.get("x-ratelimit-limit"), "100000", "an unmatched 404 carries the headers");
    t.ok(Number(missing.headers.get("x-ratelimit-reset")) > Date.now() / 1000, "reset is a future Unix time");
    t.equal(remaining(missing), remaining(first) - 1, "and spends the same IP budget");
    const wrongMethod = await api.post("/api/realtime/config");
    t.equal(wrongMethod.status, 405);
    t.equal(remaining(wrongMethod), remaining(first) - 2, "so does a 405");
    for (const path of ["/api/health", "/metrics", "/api/openapi.json", "/api/docs", "/api/docs/assets/init.js"]) {
      const res = await request(app.url, "GET", path);
      t.equal(res.status, 200, `${path} answers`);
      t.equal(res.headers.get("x-ratelimit-limit"), null, `${path} is unlimited and carries no rate-limit headers`);
    }
    const after = await api.get("/api/realtime/config");
    t.equal(remaining(after), remaining(first) - 3, "the unlimited routes spent nothing");
    const outside = await request(app.url, "GET", "/not-the-api");
    t.equal(outside.status, 404);
    t.equal(outside.body.code, "not_found");

    // Budgets live in the database: a fresh address (through a trusted proxy) starts with a full one.
    const strict = await startTestApp(t, { db: app.db, env: { RATE_LIMIT_PUBLIC_PER_HOUR: "3", TRUST_PROXY: "true" } });
    const probes = [];
    for (let i = 0; i < 4; i += 1) probes.push(await request(strict.url, "GET", `/api/probe-${i}`, { headers: { "x-forwarded-for": "203.0.113.9" } }));
    t.same(probes.map((r) => r.status), [404, 404, 404, 429], "probing runs into the limit");
    t.equal(probes[3]!.body.code, "rate_limited");
    t.ok(Number(probes[3]!.headers.get("retry-after")) > 0);
  });

  t.test("GET /metrics exposes HTTP and job figures in Prometheus text", async (t) => {
    await api.get("/api/health");
    const res = await request(app.url, "GET", "/metrics");
    t.equal(res.status, 200);
    t.match(res.headers.get("content-type"), /text\/plain/);
    t.match(res.text, /http_requests_total\{method="GET",route="\/api\/health",status="200"\} \d+/);
    t.match(res.text, /worker_processes 1/);
  });

  t.test("with METRICS_TOKEN set, /metrics needs that bearer token", async (t) => {
    const metricsToken = "metrics-token-0123456789abcdef";
    const guarded = await startTestApp(t, { env: { METRICS_TOKEN: metricsToken } });
    const open = await request(guarded.url, "GET", "/metrics");
    t.equal(open.status, 401, "no token");
    t.notMatch(open.text, /http_requests_total/, "and no figures");
    const wrong = await request(guarded.url, "GET", "/metrics", { token: "metrics-token-0123456789abcdeX" });
    t.equal(wrong.status, 401, "another token");
    const right = await request(guarded.url, "GET", "/metrics", { token: metricsToken });
    t.equal(right.status, 200);
    t.match(right.text, /http_requests_total/);
  });

  t.test("GET /api/openapi.json describes every route", async (t) => {
    const res = await api.get("/api/openapi.json");
    t.equal(res.status, 200);
    t.equal(res.body.openapi, "3.1.0");
    t.ok(res.body.paths["/api/jobs/{id}"].get, "jobs route documented");
    t.same(res.body.paths["/api/jobs/{id}"].get.security, [{ bearer: [] }]);
    t.ok(res.body.paths["/api/broadcasting/auth"].post.requestBody, "request body documented");
  });

  t.test("the OAuth endpoints served beside the registry are documented, and still served by the provider", async (t) => {
    const { paths } = (await api.get("/api/openapi.json")).body;
    const token = paths["/api/oauth/token"]?.post;
    t.ok(token, "POST /api/oauth/token is listed");
    t.same(token.security, [], "public");
    const grants = token.requestBody.content["application/json"].schema.anyOf;
    t.same(grants.map((g: { properties: { grant_type: { const: string } } }) => g.properties.grant_type.const), ["password", "refresh_token"]);
    t.same(grants[0].required.sort(), ["client_id", "client_secret", "grant_type", "password", "username"]);
    t.ok(token.requestBody.content["application/x-www-form-urlencoded"], "the form encoding too");
    t.same(token.responses["200"].content["application/json"].schema.required.sort(), ["access_token", "expires_in", "refresh_token", "token_type"]);
    t.same(token.responses["400"].content["application/json"].schema.required, ["error"], "the OAuth error shape");
    t.ok(paths["/api/oauth/jwks"]?.get, "the JWKS is listed");

    const refused = await api.post("/api/oauth/token", { grant_type: "password", client_id: "nobody", client_secret: "x".repeat(20), username: "a@example.test", password: "password1" });
    t.equal(refused.status, 400);
    t.equal(refused.body.error, "invalid_client", "answered by the provider in the documented shape");
    const jwks = await api.get("/api/oauth/jwks");
    t.equal(jwks.status, 200);
    t.ok(Array.isArray(jwks.body.keys) && jwks.body.keys.length > 0);
    t.ok(paths["/api/oauth/jwks"].get.responses["200"].content[jwks.headers.get("content-type")!.split(";")[0]!], "the served content type is the documented one");
  });

  t.test("GET /api/docs serves the reference page and its assets locally", async (t) => {
    const page = await request(app.url, "GET", "/api/docs");
    t.equal(page.status, 200);
    t.match(page.text, /swagger-ui-bundle\.js/);
    t.notMatch(page.text, /https?:\/\/(?!localhost)/, "no CDN");
    const asset = await request(app.url, "GET", "/api/docs/assets/swagger-ui-bundle.js");
    t.equal(asset.status, 200);
    t.ok(asset.text.length > 100_000);
    const traversal = await request(app.url, "GET", "/api/docs/assets/..%2F..%2Fpackage.json");
    t.equal(traversal.status, 404);
    for (const inherited of ["constructor", "__proto__", "toString"]) {
      t.equal((await request(app.url, "GET", `/api/docs/assets/${inherited}`)).status, 404, `${inherited} is no asset`);
    }
  });

  t.test("GET /api/realtime/config gives the client settings", async (t) => {
    const res = await api.get("/api/realtime/config");
    t.same(res.body, { key: "test-app-key", ws_path: "/app/test-app-key", auth_endpoint: "/api/broadcasting/auth", protocol: 7, activity_timeout: 120 });
  });
});
