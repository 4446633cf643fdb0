import t from "tap";
import { AppMetrics } from "../../api/metrics.ts";
import type { DatabasePool } from "../../shared/db/pool.ts";

// The pool is read only by the job gauges at scrape time; these tests read the HTTP series alone.
const metrics = () => new AppMetrics({} as DatabasePool);

/** The lines of one metric's Prometheus text. */
const linesOf = async (m: AppMetrics, name: string) => (await m.registry.getSingleMetricAsString(name)).split("\n");

t.test("recordRequest counts each method, route template and status apart", async (t) => {
  const m = metrics();
  m.recordRequest("GET", "/api/a", 200, 0.001);
  m.recordRequest("GET", "/api/a", 200, 0.002);
  m.recordRequest("GET", "/api/a", 404, 0.001);
  m.recordRequest("POST", "/api/a", 200, 0.001);
  m.recordRequest("GET", "/api/b", 200, 0.001);
  const lines = await linesOf(m, "http_requests_total");
  const has = (line: string) => t.ok(lines.includes(line), line);
  has('http_requests_total{method="GET",route="/api/a",status="200"} 2');
  has('http_requests_total{method="GET",route="/api/a",status="404"} 1');
  has('http_requests_total{method="POST",route="/api/a",status="200"} 1');
  has('http_requests_total{method="GET",route="/api/b",status="200"} 1');
  t.equal(lines.filter((line) => line.startsWith("http_requests_total{")).length, 4, "no other series");
});

t.test("recordRequest puts each latency in its series' histogram buckets", async (t) => {
  const m = metrics();
  m.recordRequest("GET", "/api/a", 200, 0.003);
  m.recordRequest("GET", "/api/a", 200, 0.02);
  m.recordRequest("GET", "/api/a", 500, 3);
  const lines = await linesOf(m, "http_request_duration_seconds");
  const has = (line: string) => t.ok(lines.includes(line), line);
  has('http_request_duration_seconds_bucket{le="0.005",method="GET",route="/api/a",status="200"} 1');
  has('http_request_duration_seconds_bucket{le="0.025",method="GET",route="/api/a",status="200"} 2');
  has('http_request_duration_seconds_count{method="GET",route="/api/a",status="200"} 2');
  has('http_request_duration_seconds_sum{method="GET",route="/api/a",status="200"} 0.023');
  has('http_request_duration_seconds_bucket{le="2.5",method="GET",route="/api/a",status="500"} 0');
  has('http_request_duration_seconds_bucket{le="5",method="GET",route="/api/a",status="500"} 1');
});
