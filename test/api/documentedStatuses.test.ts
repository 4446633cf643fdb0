/**
 * Under tests, a route that answers a status its OpenAPI responses do not list fails the
 * request with a 500 (api/routes/buildRouter.ts, `checkStatus`), so every test of the suite
 * checks the document against what clients really get; the statuses the shared middleware
 * may answer count as listed, by the same rules that write the document.
 */
import t from "tap";
import { z } from "zod";
import { documentedStatuses } from "../../api/openapi.ts";
import { defineRoute } from "../../api/routes/route.ts";
import { AppError } from "../../shared/errors.ts";
import { startTestApp } from "../support/app.ts";
import { buildUserWithToken } from "../support/factories.ts";
import { client, request } from "../support/http.ts";

const answer = z.object({ status: z.coerce.number().int() });

const routes = [
  defineRoute({
    method: "get",
    path: "/test/answers",
    summary: "Test only: answers the status asked for",
    tags: ["Test"],
    auth: "bearer",
    query: answer,
    responses: { 200: { description: "Asked for 200" }, 409: { description: "Asked for 409" } },
    handler: (ctx, { query }) => {
      if (query.status >= 400) throw new AppError(query.status, "asked", `Asked for ${query.status}.`);
      ctx.status = query.status;
      ctx.body = { status: query.status };
    },
  }),
];

t.test("a route's undocumented status fails the request under tests; documented ones pass", async (t) => {
  const app = await startTestApp(t, { extraRoutes: routes });
  const { token } = await buildUserWithToken(app.pool);
  const api = client(app.url, token);
  t.equal((await api.get("/api/test/answers?status=200")).status, 200, "declared success");
  t.equal((await api.get("/api/test/answers?status=409")).status, 409, "declared error");
  t.equal((await api.get("/api/test/answers?status=422")).status, 422, "422: the route reads a query");
  t.equal((await api.get("/api/test/answers?status=403")).status, 403, "403: every bearer route");
  for (const status of [201, 402, 404, 418, 423]) {
    const res = await api.get(`/api/test/answers?status=${status}`);
    t.equal(res.status, 500, `${status} is not listed (404 only for routes with path parameters): the request fails`);
  }
  t.equal((await request(app.url, "GET", "/api/test/answers?status=200")).status, 401, "401 without a token, listed for bearer routes");
});

t.test("the statuses listed are the route's own and its middleware's", async (t) => {
  const [route] = routes;
  const sorted = (set: Set<number>) => [...set].sort((a, b) => a - b);
  t.same(sorted(documentedStatuses(route!)), [200, 401, 403, 409, 422, 429, 503]);
  const withParams = { ...route!, params: z.object({ id: z.coerce.number() }), body: z.object({}), query: undefined };
  t.same(sorted(documentedStatuses(withParams)), [200, 400, 401, 403, 404, 409, 413, 415, 422, 429, 503]);
});
