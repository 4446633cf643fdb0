/**
 * A worker process for the worker-scaling benchmark: the real runner (`startWorker`) with
 * the benchmark's busy task, no crontab. Env: DATABASE_URL, WORKER_CONCURRENCY. Prints
 * "ready <pid>" once it takes jobs; stops gracefully on SIGTERM.
 */
import { createPool } from "../../../shared/db/pool.ts";
import { createLogger } from "../../../shared/logger.ts";
import { startWorker } from "../../../workers/index.ts";
import { testConfig } from "../../support/app.ts";
import { busyTask } from "./busyTask.ts";

const url = process.env.DATABASE_URL;
if (!url) throw new Error("DATABASE_URL is required");
const config = testConfig(url, {
  WORKER_CONCURRENCY: process.env.WORKER_CONCURRENCY ?? "1",
  WORKER_POLL_INTERVAL_MS: "1000",
  WORKER_HEARTBEAT_MS: "5000",
  WORKER_STALE_AFTER_MS: "15000",
});
const log = createLogger(config.logLevel, "bench-worker");
const pool = await createPool(url, { maxPoolSize: 4 });
const worker = await startWorker({ config, pool, log }, { databaseUrl: url, extraTasks: [busyTask], crontab: "" });
process.stdout.write(`ready ${process.pid}\n`);
process.on("SIGTERM", () => {
  void worker
    .stop()
    .then(() => pool.end())
    .then(() => process.exit(0));
});
