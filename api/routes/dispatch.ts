/**
 * Route dispatch by first path segment. @koa/router matches a request by testing every
 * route's regular expression in turn; with the whole API in one router that is a couple of
 * hundred tests per request, about a tenth of a simple request's CPU in the HTTP benchmark.
 * Grouping routes by their first segment (`/projects/…`, `/teams/…`) leaves a handful of
 * tests per request. Each group keeps its own router and `allowedMethods`, so 404, 405 and
 * `ctx._matchedRoute` behave as with one router.
 */
import type Router from "@koa/router";
import type { Middleware, Next } from "koa";
import type { AppContext, AppDeps, AppState } from "../context.ts";
import { buildRouter } from "./buildRouter.ts";
import type { RouteSpec } from "./route.ts";

type AppMiddleware = Middleware<AppState, { deps: AppDeps }>;
type AllowedMethodsOptions = Parameters<Router["allowedMethods"]>[0];

/** Group key of routes whose first segment is a parameter: tried after the literal group. */
const PARAMETER = "\u0000param";

/** The first segment of a route path (`/projects/{id}` → `projects`), or PARAMETER. */
function routeSegment(path: string): string {
  const segment = path.split("/")[1] ?? "";
  return segment.includes("{") ? PARAMETER : segment;
}

/** The first segment of a request path below `prefix`, or null when the path is not below it. */
function requestSegment(path: string, prefix: string): string | null {
  if (prefix !== "" && path !== prefix && !path.startsWith(`${prefix}/`)) return null;
  const rest = path.slice(prefix.length + 1);
  const slash = rest.indexOf("/");
  return slash < 0 ? rest : rest.slice(0, slash);
}

/**
 * One middleware serving `routes` under `prefix`: the request goes to the router of its
 * first segment (then to the parameter group, if any); without a match it passes on.
 * @param allowed when given, each group answers 405/501 as `router.allowedMethods(allowed)`.
 */
export function dispatchRoutes(routes: RouteSpec[], deps: AppDeps, prefix: string, allowed?: AllowedMethodsOptions): AppMiddleware {
  const groups = new Map<string, RouteSpec[]>();
  for (const route of routes) {
    const key = routeSegment(route.path);
    groups.set(key, [...(groups.get(key) ?? []), route]);
  }
  const handlers = new Map<string, AppMiddleware>();
  for (const [key, group] of groups) {
    const router = buildRouter(group, deps, prefix);
    const serve = router.routes() as AppMiddleware;
    const methods = allowed ? (router.allowedMethods(allowed) as AppMiddleware) : undefined;
    // Same order as app.use(router.routes()); app.use(router.allowedMethods()).
    handlers.set(key, methods ? (ctx, next) => serve(ctx, () => methods(ctx, next)) : serve);
  }
  const byParameter = handlers.get(PARAMETER);
  return (ctx: AppContext, next: Next) => {
    const segment = requestSegment(ctx.path, prefix);
    if (segment === null) return next();
    const handler = handlers.get(segment);
    if (!handler) return byParameter ? byParameter(ctx, next) : next();
    return byParameter ? handler(ctx, () => byParameter(ctx, next)) : handler(ctx, next);
  };
}
