/**
 * The web process of the realtime benchmark: the service's web server (HTTP + the Pusher
 * protocol WebSocket server at /app/{key}, fed by its own LISTEN connection and event
 * hub), alone in its process so its memory is its own. Prints "ready <port>"; answers an
 * IPC message "memory" with its `process.memoryUsage()` and open connection count.
 */
import { buildAppDeps } from "../../../api/appDeps.ts";
import { startWeb } from "../../../api/server.ts";
import { createPool } from "../../../shared/db/pool.ts";
import { EventHub } from "../../../shared/events/hub.ts";
import { PgListener } from "../../../shared/events/listener.ts";
import { createLogger } from "../../../shared/logger.ts";
import { testConfig } from "../../support/app.ts";

export interface ServerMemory {
  rss: number;
  heapUsed: number;
  external: number;
  connections: number;
}

const url = process.env.DATABASE_URL;
if (!url) throw new Error("DATABASE_URL is required");
const config = testConfig(url, { LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "warn", NODE_ENV: "production", METRICS_PUBLIC: "true" });
const log = createLogger(config.logLevel);
const pool = await createPool(url, { maxPoolSize: 10 });
const listener = new PgListener(url, log);
await listener.start();
const hub = new EventHub(listener, pool, log);
hub.start();
const web = await startWeb(await buildAppDeps({ config, pool, log, hub }), 0, "127.0.0.1");

process.on("message", (message) => {
  if (message !== "memory") return;
  const usage = process.memoryUsage();
  const reply: ServerMemory = { rss: usage.rss, heapUsed: usage.heapUsed, external: usage.external, connections: web.realtime.connectionCount };
  process.send?.(reply);
});
process.on("SIGTERM", () => process.exit(0));
process.stdout.write(`ready ${web.port}\n`);
