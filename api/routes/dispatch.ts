/**
 * Route dispatch by first path segment. @koa/router matches a request by testing every
 * route's regular expression in turn; with the whole API in one router that is a couple of
 * hundred tests per request, about a tenth of a simple request's CPU in the HTTP benchmark.
 * Grouping routes by their first segment (`/projects/…`, `/teams/…`) leaves a handful of
 * tests per request. Each group keeps its own router and `allowedMethods`, so 404, 405 and
 * `ctx._matchedRoute` behave as with one router.
 *
 * A route without path parameters (`/user`, `/auth/login`) is found by its exact path and
 * method in a map instead, and runs its pipeline composed once at start: the router, for
 * every request, tests the group's expressions, copies the matched layers into a new chain and
 * composes it, which was a few per cent of a one-query request's CPU. A path the router would
 * give to an earlier-declared route (a parameter route matching the same text) is left to the
 * router, as is every other spelling of the path (a trailing slash, other letter case).
 */
import type Router from "@koa/router";
import type { Middleware, Next } from "koa";
import type { AppContext, AppDeps, AppState } from "../context.ts";
import { buildRouter, routeStack } from "./buildRouter.ts";
import { toRouterPath, type RouteSpec } from "./route.ts";

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
 * `stack` run in order as one middleware, like koa-compose, but composed once: `next` of the
 * last goes on to `next`, and a middleware that throws rejects the returned promise.
 */
export function composeOnce(stack: readonly AppMiddleware[]): AppMiddleware {
  const run = (ctx: AppContext, next: Next, i: number): Promise<void> => {
    const middleware = stack[i];
    if (!middleware) return Promise.resolve(next());
    try {
      return Promise.resolve(middleware(ctx, () => run(ctx, next, i + 1)));
    } catch (error) {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passed on as thrown, as koa-compose does
      return Promise.reject(error);
    }
  };
  return (ctx, next) => run(ctx, next, 0);
}

/** What the router sets on a context for a matched route without parameters. */
interface MatchedContext {
  _matchedRoute?: string;
  params?: Record<string, string>;
}

/**
 * One middleware serving `routes` under `prefix`: a route without parameters by its exact
 * path and method, else the router of the request's first segment (then the parameter group,
 * if any); without a match it passes on.
 * @param allowed when given, each group answers 405/501 as `router.allowedMethods(allowed)`.
 */
export function dispatchRoutes(routes: RouteSpec[], deps: AppDeps, prefix: string, allowed?: AllowedMethodsOptions): AppMiddleware {
  const groups = new Map<string, RouteSpec[]>();
  for (const route of routes) {
    const key = routeSegment(route.path);
    groups.set(key, [...(groups.get(key) ?? []), route]);
  }
  const handlers = new Map<string, AppMiddleware>();
  /** Exact path → method → the route's composed pipeline (routes without parameters). */
  const literal = new Map<string, Map<string, AppMiddleware>>();
  for (const [key, group] of groups) {
    const stacks = group.map((route) => routeStack(route, deps));
    const router = buildRouter(group, stacks, prefix);
    const serve = router.routes() as AppMiddleware;
    const methods = allowed ? (router.allowedMethods(allowed) as AppMiddleware) : undefined;
    // Same order as app.use(router.routes()); app.use(router.allowedMethods()).
    handlers.set(key, methods ? (ctx, next) => serve(ctx, () => methods(ctx, next)) : serve);
    group.forEach((route, i) => {
      if (route.path.includes("{")) return;
      const path = `${prefix}${toRouterPath(route.path)}`;
      const layerPath = String(router.stack[i]!.path);
      // koa-router runs the first declared route matching path and method: only this one may answer.
      const verbs = route.method === "get" ? ["GET", "HEAD"] : [route.method.toUpperCase()];
      const pipeline = composeOnce(stacks[i]!);
      const answer: AppMiddleware = (ctx, next) => {
        const matched = ctx as AppContext & MatchedContext;
        matched._matchedRoute = layerPath;
        matched.params = {};
        return pipeline(ctx, next);
      };
      for (const verb of verbs) {
        const earlier = router.stack.slice(0, i).some((layer) => layer.methods.includes(verb) && layer.match(path));
        if (earlier) continue;
        let byMethod = literal.get(path);
        if (!byMethod) literal.set(path, (byMethod = new Map()));
        if (!byMethod.has(verb)) byMethod.set(verb, answer);
      }
    });
  }
  const byParameter = handlers.get(PARAMETER);
  return (ctx: AppContext, next: Next) => {
    const exact = literal.get(ctx.path)?.get(ctx.method);
    if (exact) return exact(ctx, next);
    const segment = requestSegment(ctx.path, prefix);
    if (segment === null) return next();
    const handler = handlers.get(segment);
    if (!handler) return byParameter ? byParameter(ctx, next) : next();
    return byParameter ? handler(ctx, () => byParameter(ctx, next)) : handler(ctx, next);
  };
}
