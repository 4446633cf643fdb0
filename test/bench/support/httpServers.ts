/**
 * The servers of the HTTP benchmark, in one child process: our full stack with a route
 * doing one typed SQL query, a bare Koa + pg handler doing the same query, and between the
 * two a bare Koa handler running the query through the service's own Slonik pool (row
 * schema, interceptors, type parsers) without any of the service's middleware, which tells
 * how much of the gap is the database layer and how much the middleware.
 * Prints "ready <ours-port> <bare-port> <slonik-port>".
 */
import Koa from "koa";
import pg from "pg";
import { z } from "zod";
import { buildAppDeps } from "../../../api/appDeps.ts";
import { defineRoute } from "../../../api/routes/route.ts";
import { startWeb } from "../../../api/server.ts";
import { createPool, sql, type DatabasePool } from "../../../shared/db/pool.ts";
import { EventHub } from "../../../shared/events/hub.ts";
import { PgListener } from "../../../shared/events/listener.ts";
import { createLogger } from "../../../shared/logger.ts";
import { testConfig } from "../../support/app.ts";

const url = process.env.DATABASE_URL!;
const QUERY_ID = 1;
const userSummary = z.object({ id: z.number(), name: z.string(), email: z.string() });
/** The benchmark's query, typed, through a pool of the service. */
const oneQuery = (through: DatabasePool) => through.one(sql.type(userSummary)`select id, name, email from users where id = ${QUERY_ID}`);

const config = testConfig(url, {
  LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "info",
  NODE_ENV: "production",
  METRICS_PUBLIC: "true",
  RATE_LIMIT_PUBLIC_PER_HOUR: "100000000",
  RATE_LIMIT_USER_PER_HOUR: "100000000",
});
const log = createLogger(config.logLevel);
const pool = await createPool(url, { maxPoolSize: 10 });
const listener = new PgListener(url, log);
await listener.start();
const hub = new EventHub(listener, pool, log);
hub.start();

/** The benchmark's one-query route, declared like any route of the service. */
export const oneQueryRoute = defineRoute({
  method: "get",
  path: "/bench/one-query",
  summary: "Benchmark: one typed query",
  tags: ["Bench"],
  auth: "public",
  responses: { 200: { description: "A user summary", schema: userSummary } },
  handler: async (ctx) => {
    ctx.body = await oneQuery(ctx.deps.pool);
  },
});

const ours = await startWeb(await buildAppDeps({ config, pool, log, hub }), 0, "127.0.0.1", { extraRoutes: [oneQueryRoute] });

const barePool = new pg.Pool({ connectionString: url, max: 10 });
const bare = new Koa();
bare.use(async (ctx) => {
  const result = await barePool.query("select id, name, email from users where id = $1", [QUERY_ID]);
  ctx.body = result.rows[0];
});
const bareServer = bare.listen(0, "127.0.0.1");
await new Promise((resolve) => bareServer.once("listening", resolve));
const barePort = (bareServer.address() as { port: number }).port;

const slonikOnly = new Koa();
slonikOnly.use(async (ctx) => {
  ctx.body = await oneQuery(pool);
});
const slonikServer = slonikOnly.listen(0, "127.0.0.1");
await new Promise((resolve) => slonikServer.once("listening", resolve));
const slonikPort = (slonikServer.address() as { port: number }).port;
process.stdout.write(`ready ${ours.port} ${barePort} ${slonikPort}\n`);
process.on("SIGTERM", () => process.exit(0));
