/**
 * The two servers of the metrics ingestion benchmark, in one child process: the service
 * (POST /api/performance-metrics through the full stack) and a bare Koa + pg handler that
 * parses the same JSON and inserts the same rows with one multi-row insert.
 * Prints "ready <ours-port> <bare-port>".
 */
import Koa from "koa";
import pg from "pg";
import { buildAppDeps } from "../../../api/appDeps.ts";
import { startWeb } from "../../../api/server.ts";
import { createPool } from "../../../shared/db/pool.ts";
import { EventHub } from "../../../shared/events/hub.ts";
import { PgListener } from "../../../shared/events/listener.ts";
import { createLogger } from "../../../shared/logger.ts";
import { testConfig } from "../../support/app.ts";

const url = process.env.DATABASE_URL!;
const config = testConfig(url, {
  LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "warn",
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
const ours = await startWeb(await buildAppDeps({ config, pool, log, hub }), 0, "127.0.0.1");

interface Measure {
  name: string;
  value: number;
  route: string;
  device_class: string;
}
const barePool = new pg.Pool({ connectionString: url, max: 10 });
const bare = new Koa();
bare.use(async (ctx) => {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
  const { metrics } = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { metrics: Measure[] };
  await barePool.query(
    "insert into performance_measures (name, value, route, device_class) select * from unnest($1::text[], $2::float8[], $3::text[], $4::text[])",
    [metrics.map((m) => m.name), metrics.map((m) => m.value), metrics.map((m) => m.route), metrics.map((m) => m.device_class)],
  );
  ctx.status = 202;
  ctx.body = { accepted: metrics.length };
});
const bareServer = bare.listen(0, "127.0.0.1");
await new Promise((resolve) => bareServer.once("listening", resolve));
process.stdout.write(`ready ${ours.port} ${(bareServer.address() as { port: number }).port}\n`);
process.on("SIGTERM", () => process.exit(0));
