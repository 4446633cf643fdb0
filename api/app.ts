/**
 * makeApp(): the Koa application with its middleware stack. It never listens; server.ts
 * does (and adds the WebSocket upgrade and graceful shutdown).
 *
 * Stack: request context (id, logs, metrics) → error mapping → security headers →
 * routes (each: authenticate → body → validate → handler) → unrouted requests under /api
 * charged to the caller's IP → JSON 404/405.
 */
import { createRequire } from "node:module";
import Koa from "koa";
import "../shared/validation.ts";
import { AppError } from "../shared/errors.ts";
import type { AppDeps, AppState } from "./context.ts";
import { limitUnrouted } from "./middleware/rateLimit.ts";
import { requestContext } from "./middleware/requestContext.ts";
import { buildOpenApi } from "./openapi.ts";
import { dispatchRoutes } from "./routes/dispatch.ts";
import { allRoutes } from "./routes/index.ts";
import type { RouteSpec } from "./routes/route.ts";
import { openapiRoute } from "./routes/system/system.router.ts";
import { oauthMount } from "./oauth/mount.ts";

const { version } = createRequire(import.meta.url)("../package.json") as { version: string };

export interface MakeAppOptions {
  /** Extra routes (tests, benchmarks). */
  extraRoutes?: RouteSpec[];
}

export function makeApp(deps: AppDeps, options: MakeAppOptions = {}): Koa<AppState, { deps: AppDeps }> {
  const app = new Koa<AppState, { deps: AppDeps }>({ proxy: deps.config.trustProxy });
  app.context.deps = deps;
  app.silent = true; // errors are logged by the error middleware, with the request id

  const routes = [...allRoutes, ...(options.extraRoutes ?? [])];
  // The OpenAPI document is built on its first request, not at start: turning every route's
  // schemas into JSON Schema costs about half a second of CPU, which each web process (and
  // each test file) would otherwise pay whether or not anyone reads the document.
  const described = [...routes];
  let document: unknown;
  routes.push(openapiRoute(() => (document ??= buildOpenApi(described, { title: "SchemaForge API", version, serverUrl: deps.config.appUrl }))));

  const api = dispatchRoutes(routes.filter((r) => !r.root), deps, "/api", {
    throw: true,
    methodNotAllowed: () => new AppError(405, "method_not_allowed", "The method is not allowed for this route."),
    notImplemented: () => new AppError(501, "not_implemented", "The method is not implemented."),
  });
  const root = dispatchRoutes(routes.filter((r) => r.root), deps, "");

  app.use(requestContext);
  app.use(oauthMount);
  app.use(api);
  app.use(root);
  app.use(limitUnrouted);
  return app;
}
