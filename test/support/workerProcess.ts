/**
 * A worker as its own OS process, for tests that need one (crash recovery, events from a
 * separate process). Env: DATABASE_URL plus the usual test settings. Prints "ready" once
 * it takes jobs; exits on SIGTERM after a graceful stop.
 */
import { createPool } from "../../shared/db/pool.ts";
import { createLogger } from "../../shared/logger.ts";
import { startWorker } from "../../workers/index.ts";
import { testConfig } from "./app.ts";
import { testTasks } from "./testTasks.ts";

const url = process.env.DATABASE_URL;
if (!url) throw new Error("DATABASE_URL is required");
const overrides = Object.fromEntries(
  Object.entries(process.env).filter(([name, value]) => /^(WORKER|PAYOUT|STORE)_/.test(name) && value),
) as Record<string, string>;
const config = testConfig(url, { WORKER_CONCURRENCY: "1", ...overrides });
const log = createLogger(config.logLevel, "test-worker");
const pool = await createPool(url, { maxPoolSize: 4 });
const worker = await startWorker({ config, pool, log }, { databaseUrl: url, extraTasks: testTasks, crontab: "" });
process.stdout.write(`ready ${process.pid}\n`);
process.on("SIGTERM", () => {
  void worker
    .stop()
    .then(() => pool.end())
    .then(() => process.exit(0));
});
