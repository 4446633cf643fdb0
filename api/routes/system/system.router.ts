/**
 * Operational routes: health, Prometheus metrics, the OpenAPI document and its reference
 * page, and the public realtime settings a client needs to connect.
 */
import { createReadStream } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { z } from "zod";
import { own } from "../../../shared/dict.ts";
import { sql } from "../../../shared/db/pool.ts";
import { notFound, unauthorized } from "../../../shared/errors.ts";
import { defineRoute } from "../route.ts";
import { healthResponse, realtimeConfigResponse } from "./system.schema.ts";
import { bearerToken } from "../../middleware/authenticate.ts";
import { timingSafeEqual } from "node:crypto";

const startedAt = Date.now();
const version = (createRequire(import.meta.url)("../../../package.json") as { version: string }).version;
const swaggerDir = path.dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
const swaggerAssets: Record<string, string> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "swagger-ui-standalone-preset.js": "text/javascript; charset=utf-8",
  "favicon-32x32.png": "image/png",
};

const queueRow = z.object({ pending: z.number(), running: z.number(), failed_last_hour: z.number(), workers: z.number() });

const health = defineRoute({
  method: "get",
  path: "/health",
  unlimited: true,
  summary: "Service health: database, job queue and realtime status",
  tags: ["System"],
  auth: "public",
  responses: { 200: { description: "Healthy", schema: healthResponse }, 503: { description: "Database unreachable", schema: healthResponse } },
  handler: async (ctx) => {
    const { pool, hub } = ctx.deps;
    const t0 = performance.now();
    let database: z.infer<typeof healthResponse>["database"];
    let queue: z.infer<typeof healthResponse>["queue"] = { ok: false, pending: null, running: null, failed_last_hour: null, workers: null };
    try {
      const figures = await pool.one(sql.type(queueRow)`
        select
          (select count(*)::int from jobs where status = 'queued') as pending,
          (select count(*)::int from jobs where status = 'running') as running,
          (select count(*)::int from jobs where status = 'failed' and finished_at > now() - interval '1 hour') as failed_last_hour,
          (select count(*)::int from worker_processes where beat_at > now() - interval '1 minute') as workers`);
      database = { ok: true, latency_ms: Math.round((performance.now() - t0) * 10) / 10, error: null };
      queue = { ok: figures.workers > 0 || figures.pending === 0, ...figures };
    } catch (error) {
      ctx.state.log.warn({ err: error }, "health check: database unreachable");
      database = { ok: false, latency_ms: null, error: "database unreachable" };
    }
    const ok = database.ok;
    ctx.status = ok ? 200 : 503;
    ctx.body = {
      status: ok && queue.ok && hub.connected ? "ok" : "degraded",
      version,
      uptime_s: Math.round((Date.now() - startedAt) / 1000),
      database,
      queue,
      realtime: { listening: hub.connected, connections: ctx.deps.metrics.realtimeConnections },
    };
  },
});

const metrics = defineRoute({
  method: "get",
  path: "/metrics",
  unlimited: true,
  root: true,
  summary: "Prometheus metrics (HTTP and job figures)",
  tags: ["System"],
  auth: "public",
  responses: {
    200: { description: "Prometheus text exposition format", contentType: "text/plain" },
    401: { description: "METRICS_TOKEN is set and the request does not carry it as a bearer token" },
  },
  handler: async (ctx) => {
    const expected = ctx.deps.config.metricsToken;
    if (expected) {
      const given = Buffer.from(bearerToken(ctx.get("authorization")) ?? "");
      const want = Buffer.from(expected);
      if (given.length !== want.length || !timingSafeEqual(given, want)) throw unauthorized("A metrics token is required.");
    }
    ctx.type = ctx.deps.metrics.registry.contentType;
    ctx.body = await ctx.deps.metrics.registry.metrics();
  },
});

const realtimeConfig = defineRoute({
  method: "get",
  path: "/realtime/config",
  summary: "Settings for a Pusher-protocol client (pusher-js, laravel-echo)",
  tags: ["Realtime"],
  auth: "public",
  responses: { 200: { description: "Client settings", schema: realtimeConfigResponse } },
  handler: (ctx) => {
    const { key, activityTimeoutS } = ctx.deps.config.realtime;
    ctx.body = { key, ws_path: `/app/${key}`, auth_endpoint: "/api/broadcasting/auth", protocol: 7, activity_timeout: activityTimeoutS };
  },
});

const docsPage = defineRoute({
  method: "get",
  path: "/docs",
  unlimited: true,
  summary: "API reference page",
  tags: ["System"],
  auth: "public",
  hidden: true,
  responses: { 200: { description: "HTML page", contentType: "text/html" } },
  handler: (ctx) => {
    ctx.type = "text/html; charset=utf-8";
    ctx.set("Cache-Control", "no-cache");
    ctx.set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'");
    ctx.body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>SchemaForge API</title>
<link rel="stylesheet" href="/api/docs/assets/swagger-ui.css"><link rel="icon" href="/api/docs/assets/favicon-32x32.png"></head>
<body><div id="swagger-ui"></div>
<script src="/api/docs/assets/swagger-ui-bundle.js"></script>
<script src="/api/docs/assets/init.js"></script></body></html>`;
  },
});

const docsAsset = defineRoute({
  method: "get",
  path: "/docs/assets/{file}",
  unlimited: true,
  summary: "Static assets of the API reference page",
  tags: ["System"],
  auth: "public",
  hidden: true,
  params: z.object({ file: z.string() }),
  responses: { 200: { description: "Asset" } },
  handler: (ctx, { params }) => {
    ctx.set("Cache-Control", "public, max-age=86400");
    if (params.file === "init.js") {
      ctx.type = "text/javascript; charset=utf-8";
      ctx.body = `window.ui = SwaggerUIBundle({ url: "/api/openapi.json", dom_id: "#swagger-ui", deepLinking: true, persistAuthorization: true });`;
      return;
    }
    const type = own(swaggerAssets, params.file); // not an inherited "constructor"
    if (!type) throw notFound("Asset");
    ctx.type = type;
    ctx.body = createReadStream(path.join(swaggerDir, params.file));
  },
});

/** The OpenAPI document route; the document is built once from the full route list. */
/** The route serving the OpenAPI document that `document` returns (built when first asked for). */
export function openapiRoute(document: () => unknown) {
  return defineRoute({
    method: "get",
    path: "/openapi.json",
  unlimited: true,
    summary: "OpenAPI 3.1 description of this API",
    tags: ["System"],
    auth: "public",
    hidden: true,
    responses: { 200: { description: "OpenAPI document" } },
    handler: (ctx) => {
      ctx.set("Cache-Control", "no-cache");
      ctx.body = document();
    },
  });
}

export const systemRoutes = [health, metrics, realtimeConfig, docsPage, docsAsset];
