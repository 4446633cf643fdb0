/**
 * Prometheus metrics of a web process: HTTP request counts and latencies by route
 * template, and job figures read from the database at scrape time (so they are the same
 * whichever web process is scraped, and cover every worker).
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import { z } from "zod";
import { sql, type DatabasePool } from "../shared/db/pool.ts";

/** The labelled children of one method, route template and status. */
interface RequestSeries {
  count: { inc(): void };
  duration: { observe(value: number): void };
}

export class AppMetrics {
  readonly registry = new Registry();
  readonly httpRequests: Counter<"method" | "route" | "status">;
  readonly httpDuration: Histogram<"method" | "route" | "status">;
  /** Open WebSocket connections on this process, kept by the realtime server. */
  realtimeConnections = 0;
  /**
   * Label children by route, then method, then status: prom-client hashes labels on every call
   * otherwise, and a joined "method route status" key is a new string to hash per request;
   * the route and method strings are the router's and the HTTP parser's own, reused.
   */
  readonly #requestSeries = new Map<string, Map<string, Map<number, RequestSeries>>>();

  /** Counts one finished HTTP request and its latency. */
  recordRequest(method: string, route: string, status: number, seconds: number): void {
    let byMethod = this.#requestSeries.get(route);
    if (!byMethod) this.#requestSeries.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map()));
    let series = byStatus.get(status);
    if (!series) {
      const labels = { method, route, status: String(status) };
      series = { count: this.httpRequests.labels(labels), duration: this.httpDuration.labels(labels) };
      byStatus.set(status, series);
    }
    series.count.inc();
    series.duration.observe(seconds);
  }

  constructor(pool: DatabasePool) {
    collectDefaultMetrics({ register: this.registry });
    this.httpRequests = new Counter({
      name: "http_requests_total",
      help: "HTTP requests by method, route template and status.",
      labelNames: ["method", "route", "status"],
      registers: [this.registry],
    });
    this.httpDuration = new Histogram({
      name: "http_request_duration_seconds",
      help: "HTTP request latency by method, route template and status.",
      labelNames: ["method", "route", "status"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [this.registry],
    });
    const openConnections = () => this.realtimeConnections;
    new Gauge({
      name: "realtime_connections",
      help: "Open WebSocket connections on this process.",
      registers: [this.registry],
      collect() {
        this.set(openConnections());
      },
    });
    const jobRows = z.object({ kind: z.string(), status: z.string(), count: z.number() });
    new Gauge({
      name: "jobs",
      help: "Job records by kind and status (queued and running: all; finished: last 24 hours).",
      labelNames: ["kind", "status"],
      registers: [this.registry],
      async collect() {
        this.reset();
        const rows = await pool.any(sql.type(jobRows)`
          select kind, status, count(*)::int as count from jobs
          where status in ('queued', 'running') or finished_at > now() - interval '24 hours'
          group by kind, status`);
        for (const row of rows) this.set({ kind: row.kind, status: row.status }, row.count);
      },
    });
    const durations = z.object({ kind: z.string(), p50: z.number().nullable(), p95: z.number().nullable() });
    new Gauge({
      name: "job_duration_seconds",
      help: "Run time of jobs finished in the last hour, by kind and quantile.",
      labelNames: ["kind", "quantile"],
      registers: [this.registry],
      async collect() {
        this.reset();
        const rows = await pool.any(sql.type(durations)`
          select kind,
            percentile_cont(0.5) within group (order by extract(epoch from finished_at - started_at))::float8 as p50,
            percentile_cont(0.95) within group (order by extract(epoch from finished_at - started_at))::float8 as p95
          from jobs where finished_at > now() - interval '1 hour' and started_at is not null group by kind`);
        for (const row of rows) {
          if (row.p50 !== null) this.set({ kind: row.kind, quantile: "0.5" }, row.p50);
          if (row.p95 !== null) this.set({ kind: row.kind, quantile: "0.95" }, row.p95);
        }
      },
    });
    new Gauge({
      name: "worker_processes",
      help: "Worker processes with a live heartbeat.",
      registers: [this.registry],
      async collect() {
        this.set(await pool.oneFirst(sql.type(z.object({ count: z.number() }))`select count(*)::int as count from worker_processes`));
      },
    });
  }
}
