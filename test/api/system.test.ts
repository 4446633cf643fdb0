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

  t.test("GET /metrics exposes HTTP and job figures in Prometheus text", async (t) => {
    await api.get("/api/health");
    const res = await request(app.url, "GET", "/metrics");
    t.equal(res.status, 200);
    t.match(res.headers.get("content-type"), /text\/plain/);
    t.match(res.text, /http_requests_total\{method="GET",route="\/api\/health",status="200"\} \d+/);
    t.match(res.text, /worker_processes 1/);
  });

  t.test("GET /api/openapi.json describes every route", async (t) => {
    const res = await api.get("/api/openapi.json");
    t.equal(res.status, 200);
    t.equal(res.body.openapi, "3.1.0");
    t.ok(res.body.paths["/api/jobs/{id}"].get, "jobs route documented");
    t.same(res.body.paths["/api/jobs/{id}"].get.security, [{ bearer: [] }]);
    t.ok(res.body.paths["/api/broadcasting/auth"].post.requestBody, "request body documented");
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
  });

  t.test("GET /api/realtime/config gives the client settings", async (t) => {
    const res = await api.get("/api/realtime/config");
    t.same(res.body, { key: "test-app-key", ws_path: "/app/test-app-key", auth_endpoint: "/api/broadcasting/auth", protocol: 7, activity_timeout: 120 });
  });
});
