/**
 * Route dispatch (api/routes/dispatch.ts): a route without path parameters is found by its
 * exact path and method and runs its pipeline composed once; everything else goes through the
 * router. Both must answer as one @koa/router would: the first declared route matching path and
 * method wins, HEAD follows GET, a trailing slash or other letter case still reaches the route,
 * a wrong method is a 405, and the matched route template is what metrics and logs label.
 */
import type { AddressInfo } from "node:net";
import Koa from "koa";
import t from "tap";
import type { AppDeps } from "../../api/context.ts";
import { composeOnce, dispatchRoutes } from "../../api/routes/dispatch.ts";
import { defineRoute, type RouteSpec } from "../../api/routes/route.ts";
import { AppError } from "../../shared/errors.ts";

/** A public, unlimited System route (its pipeline is validation and the handler only) answering `name`. */
const route = (method: RouteSpec["method"], path: string, name: string): RouteSpec =>
  defineRoute({
    method,
    path,
    summary: name,
    tags: ["System"],
    auth: "public",
    unlimited: true,
    responses: { 200: { description: name } },
    handler: (ctx) => {
      ctx.body = { route: name, params: (ctx as unknown as { params: Record<string, string> }).params };
    },
  });

t.test("routes without parameters answer as the router would", async (t) => {
  const routes = [
    route("get", "/things/{name}", "thing by name"),
    route("get", "/things/mine", "mine (declared after a route matching it)"),
    route("get", "/widgets/all", "all widgets"),
    route("post", "/widgets/all", "new widget"),
    route("get", "/widgets/{id}", "widget by id"),
  ];
  const deps = { config: { env: "production" } } as unknown as AppDeps;
  const app = new Koa();
  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      ctx.status = error instanceof AppError ? error.status : 500;
      ctx.body = { code: error instanceof AppError ? error.code : "error" };
    } finally {
      ctx.set("x-matched-route", String((ctx as { _matchedRoute?: string })._matchedRoute ?? "unmatched"));
    }
  });
  app.use(
    dispatchRoutes(routes, deps, "/api", {
      throw: true,
      methodNotAllowed: () => new AppError(405, "method_not_allowed", "not allowed"),
      notImplemented: () => new AppError(501, "not_implemented", "not implemented"),
    }) as Koa.Middleware,
  );
  const server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  t.teardown(() => server.close());
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const call = async (method: string, path: string) => {
    const res = await fetch(`${base}${path}`, { method });
    const text = await res.text();
    return { status: res.status, route: res.headers.get("x-matched-route"), body: text && res.headers.get("content-type")?.includes("json") ? (JSON.parse(text) as Record<string, unknown>) : undefined };
  };

  const all = await call("GET", "/api/widgets/all");
  t.same(all, { status: 200, route: "/api/widgets/all", body: { route: "all widgets", params: {} } });
  t.same((await call("POST", "/api/widgets/all")).body, { route: "new widget", params: {} }, "the method picks the route");
  const head = await call("HEAD", "/api/widgets/all");
  t.same([head.status, head.route, head.body], [200, "/api/widgets/all", undefined], "HEAD runs the GET route without a body");
  t.same((await call("GET", "/api/widgets/ALL/")).body, { route: "all widgets", params: {} }, "a trailing slash and other case still reach it");

  const mine = await call("GET", "/api/things/mine");
  t.same(mine.body, { route: "thing by name", params: { name: "mine" } }, "an earlier route matching the path answers, as with the router");
  t.equal(mine.route, "/api/things/:name");

  t.same((await call("GET", "/api/widgets/7")).body, { route: "widget by id", params: { id: "7" } }, "parameter routes go through the router");
  const wrong = await call("DELETE", "/api/widgets/all");
  t.same([wrong.status, wrong.body?.code], [405, "method_not_allowed"]);
  const missing = await call("GET", "/api/widgets/all/more");
  t.same([missing.status, missing.route], [404, "unmatched"]);
});

t.test("a pipeline composed once runs in order and turns a throw into a rejection", async (t) => {
  const seen: string[] = [];
  const pipeline = composeOnce([
    async (_ctx, next) => {
      seen.push("a");
      await next();
      seen.push("a after");
    },
    (_ctx, next) => {
      seen.push("b");
      return next();
    },
  ]);
  await pipeline({} as never, () => {
    seen.push("next");
    return Promise.resolve();
  });
  t.same(seen, ["a", "b", "next", "a after"]);
  const throwing = composeOnce([
    () => {
      throw new AppError(503, "maintenance", "down");
    },
  ]);
  const outcome = throwing({} as never, () => Promise.resolve());
  t.ok(outcome instanceof Promise, "a synchronous throw is returned as a rejected promise");
  await t.rejects(outcome, { code: "maintenance" });
});
