/**
 * Starts the real service for a test: a fresh database, the web server on an ephemeral
 * port (with its LISTEN connection and event hub) and, when asked, a worker in the same
 * process. Everything is stopped in `t.teardown`.
 */
import type { Test } from "tap";
import { buildAppDeps } from "../../api/appDeps.ts";
import type { AddressInfo } from "node:net";
import type { RouteSpec } from "../../api/routes/route.ts";
import { createHttpServer, startWeb, type RunningWeb } from "../../api/server.ts";
import type { AppDeps } from "../../api/context.ts";
import { loadConfig, type Config } from "../../shared/config.ts";
import type { DatabasePool } from "../../shared/db/pool.ts";
import { EventHub } from "../../shared/events/hub.ts";
import { PgListener } from "../../shared/events/listener.ts";
import { createLogger } from "../../shared/logger.ts";
import "../../shared/validation.ts";
import type { TaskDefinition } from "../../workers/defineTask.ts";
import { startWorker, type RunningWorker } from "../../workers/index.ts";
import { freshDatabase, type TestDatabase } from "./db.ts";

/** Configuration for tests: fixed secrets, quiet logs, fast heartbeats. */
export function testConfig(databaseUrl: string, overrides: Record<string, string> = {}): Config {
  return loadConfig({
    NODE_ENV: "test",
    DATABASE_URL: databaseUrl,
    // One key for every process of a test run, as in production all processes share APP_KEY.
    APP_KEY: "5f2b9c0e8d7a41f3b6e2c9d8a7f01e4c3b2a19087f6e5d4c3b2a1908f7e6d5c4",
    REALTIME_APP_KEY: "test-app-key",
    REALTIME_APP_SECRET: "test-app-secret-0123456789",
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
    WORKER_CONCURRENCY: "2",
    WORKER_POLL_INTERVAL_MS: "200",
    WORKER_HEARTBEAT_MS: "300",
    WORKER_STALE_AFTER_MS: "1500",
    SYNC_WAIT_MS: "10000",
    SHUTDOWN_TIMEOUT_MS: "2000",
    ALLOW_PRIVATE_NETWORK_TARGETS: "true",
    OAUTH_CLIENT_ID: "test-client",
    OAUTH_CLIENT_SECRET: "test-client-secret-0123456789",
    RATE_LIMIT_PUBLIC_PER_HOUR: "100000",
    RATE_LIMIT_USER_PER_HOUR: "100000",
    ...overrides,
  });
}

export interface TestApp {
  db: TestDatabase;
  pool: DatabasePool;
  config: Config;
  deps: AppDeps;
  web: RunningWeb;
  worker: RunningWorker | undefined;
  /** http://127.0.0.1:port */
  url: string;
}

export interface TestAppOptions {
  worker?: boolean;
  extraTasks?: TaskDefinition[];
  extraRoutes?: RouteSpec[];
  env?: Record<string, string>;
  /** Reuse an existing database (a second web process on the same data). */
  db?: TestDatabase;
  /** Log at trace level into this array, one JSON line per entry, instead of staying quiet. */
  logLines?: string[];
}

export async function startTestApp(t: Test, options: TestAppOptions = {}): Promise<TestApp> {
  const db = options.db ?? (await freshDatabase(t));
  // The OAuth issuer is this server's URL, so the socket is bound (to any free port) before
  // the config names it: no other process can take the port in between.
  const server = createHttpServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const config = testConfig(db.url, { APP_URL: `http://127.0.0.1:${port}`, ...options.env });
  const lines = options.logLines;
  const log = lines ? createLogger("trace", undefined, { write: (line: string) => void lines.push(line) }) : createLogger(config.logLevel);
  const listener = new PgListener(db.url, log);
  await listener.start();
  const hub = new EventHub(listener, db.pool, log);
  hub.start();
  const deps: AppDeps = await buildAppDeps({ config, pool: db.pool, log, hub });
  const web = await startWeb(deps, port, "127.0.0.1", { extraRoutes: options.extraRoutes ?? [], server });
  const worker = options.worker
    ? await startWorker({ config, pool: db.pool, log }, { databaseUrl: db.url, extraTasks: options.extraTasks ?? [], crontab: "" })
    : undefined;
  t.teardown(async () => {
    await web.stop();
    await deps.identity.close();
    await worker?.stop();
    hub.stop();
    await listener.stop();
  });
  return { db, pool: db.pool, config, deps, web, worker, url: `http://127.0.0.1:${web.port}` };
}
