/**
 * Starts the real service for a test: a fresh database, the web server on an ephemeral
 * port (with its LISTEN connection and event hub) and, when asked, a worker in the same
 * process. Everything is stopped in `t.teardown`.
 */
import { randomBytes } from "node:crypto";
import type { Test } from "tap";
import { AppMetrics } from "../../api/metrics.ts";
import type { RouteSpec } from "../../api/routes/route.ts";
import { startWeb, type RunningWeb } from "../../api/server.ts";
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
    APP_KEY: randomBytes(32).toString("hex"),
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
}

export async function startTestApp(t: Test, options: TestAppOptions = {}): Promise<TestApp> {
  const db = options.db ?? (await freshDatabase(t));
  const config = testConfig(db.url, options.env);
  const log = createLogger(config.logLevel);
  const listener = new PgListener(db.url, log);
  await listener.start();
  const hub = new EventHub(listener, db.pool, log);
  hub.start();
  const deps: AppDeps = { config, pool: db.pool, log, hub, metrics: new AppMetrics(db.pool) };
  const web = await startWeb(deps, 0, "127.0.0.1", { extraRoutes: options.extraRoutes ?? [] });
  const worker = options.worker
    ? await startWorker({ config, pool: db.pool, log }, { databaseUrl: db.url, extraTasks: options.extraTasks ?? [], crontab: "" })
    : undefined;
  t.teardown(async () => {
    await web.stop();
    await worker?.stop();
    hub.stop();
    await listener.stop();
  });
  return { db, pool: db.pool, config, deps, web, worker, url: `http://127.0.0.1:${web.port}` };
}
