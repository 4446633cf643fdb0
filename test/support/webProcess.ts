/**
 * A web process as its own OS process, for tests that need two (rate limits shared through
 * the database) or a real signal (graceful shutdown). Serves the test routes too. Env:
 * DATABASE_URL and test settings (RATE_LIMIT_*, LOGIN_*, SHUTDOWN_TIMEOUT_MS); prints
 * "ready <port>". On SIGTERM it stops as the web command does: no new connections,
 * in-flight requests finish (up to SHUTDOWN_TIMEOUT_MS), then it exits 0.
 */
import { buildAppDeps } from "../../api/appDeps.ts";
import { startWeb } from "../../api/server.ts";
import { createPool } from "../../shared/db/pool.ts";
import { freePort } from "../../shared/db/embedded.ts";
import { EventHub } from "../../shared/events/hub.ts";
import { PgListener } from "../../shared/events/listener.ts";
import { createLogger } from "../../shared/logger.ts";
import "../../shared/validation.ts";
import { testConfig } from "./app.ts";
import { testRoutes } from "./testRoutes.ts";

const url = process.env.DATABASE_URL;
if (!url) throw new Error("DATABASE_URL is required");
const port = await freePort();
const overrides = Object.fromEntries(Object.entries(process.env).filter(([n, v]) => /^(RATE_LIMIT_|LOGIN_|SHUTDOWN_TIMEOUT_MS$)/.test(n) && v)) as Record<string, string>;
const config = testConfig(url, { APP_URL: process.env.APP_URL ?? `http://127.0.0.1:${port}`, ...overrides });
const log = createLogger(config.logLevel, "test-web");
const pool = await createPool(url, { maxPoolSize: 4 });
const listener = new PgListener(url, log);
await listener.start();
const hub = new EventHub(listener, pool, log);
hub.start();
const deps = await buildAppDeps({ config, pool, log, hub });
const web = await startWeb(deps, port, "127.0.0.1", { extraRoutes: testRoutes });
process.stdout.write(`ready ${web.port}\n`);
process.on("SIGTERM", () => {
  void web
    .stop()
    .then(() => deps.identity.close())
    .then(() => process.exit(0));
});
