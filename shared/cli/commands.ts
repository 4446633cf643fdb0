/**
 * The process commands: `start` (migrate + web + worker in one process, the development
 * default), `web`, `worker` and `migrate` (the Procfile's three process types).
 * shared/cli is the composition root, the one place in shared/ that reaches into api/ and
 * workers/ (loaded lazily, so `migrate` does not load the web stack).
 */
import type { Config } from "../config.ts";
import { migrate, pendingMigrations } from "../db/migrate.ts";
import { createLogger } from "../logger.ts";
import { openDatabase, openRuntime, type Runtime } from "./runtime.ts";

type Stopper = () => Promise<void>;

/**
 * What closing the runtime may take after the parts have drained (the LISTEN connection,
 * the pool with its cancelling of left-over queries, an embedded server's own shutdown);
 * each step bounds itself, so this only catches a step that hangs all the same.
 */
const CLOSE_BUDGET_MS = 20_000;

/**
 * Runs `stop` on the first SIGTERM/SIGINT; a second signal exits at once. `drains` is how
 * many parts each wait up to SHUTDOWN_TIMEOUT_MS one after the other: past that and
 * CLOSE_BUDGET_MS, the process exits (status 1) whatever is still pending.
 */
function onShutdownSignal(runtime: Runtime, stop: Stopper, drains: number): void {
  let signalled = false;
  const handler = (signal: NodeJS.Signals) => {
    if (signalled) {
      runtime.log.warn({ signal }, "second signal: exiting now");
      process.exit(130);
    }
    signalled = true;
    runtime.log.info({ signal }, "shutting down gracefully");
    const budgetMs = drains * runtime.config.shutdownTimeoutMs + CLOSE_BUDGET_MS;
    setTimeout(() => {
      runtime.log.error({ budgetMs }, "shutdown did not finish in time: exiting now");
      process.exit(1);
    }, budgetMs).unref();
    stop()
      .then(() => runtime.close())
      .then(() => {
        runtime.log.info("stopped");
        process.exit(0);
      })
      .catch((error: unknown) => {
        runtime.log.error({ err: error }, "shutdown failed");
        process.exit(1);
      });
  };
  process.on("SIGTERM", handler);
  process.on("SIGINT", handler);
}

async function requireMigrated(runtime: Runtime): Promise<void> {
  const pending = await pendingMigrations(runtime.database.url);
  if (pending.length) {
    throw new Error(`The database has ${pending.length} pending migration(s) (${pending.join(", ")}); run "npm run migrate" (the Procfile's release step) first.`);
  }
}

async function startWebPart(runtime: Runtime): Promise<Stopper> {
  const { startWeb } = await import("../../api/server.ts");
  const { buildAppDeps } = await import("../../api/appDeps.ts");
  const { config, pool, log, hub } = runtime;
  const deps = await buildAppDeps({ config, pool, log, hub });
  const web = await startWeb(deps, config.port, config.host);
  log.info({ url: web.url }, `listening on ${web.url} (API at ${web.url}/api, docs at ${web.url}/api/docs)`);
  return async () => {
    await web.stop();
    await deps.identity.close();
  };
}

async function startWorkerPart(runtime: Runtime): Promise<Stopper> {
  const { startWorker } = await import("../../workers/index.ts");
  const worker = await startWorker({ config: runtime.config, pool: runtime.pool, log: runtime.log }, { databaseUrl: runtime.database.url });
  return () => worker.stop();
}

/** `migrate`: apply pending migrations and exit. */
export async function migrateCommand(config: Config): Promise<void> {
  const log = createLogger(config.logLevel, "migrate");
  const database = await openDatabase(config, log);
  try {
    const { applied } = await migrate(database.url, (line) => log.info(line));
    log.info(applied.length ? `applied ${applied.length} migration(s)` : "database is up to date");
  } finally {
    await database.stop();
  }
}

/** `web`: the API and WebSocket server. */
export async function webCommand(config: Config): Promise<void> {
  const runtime = await openRuntime(config, { name: "web" });
  await requireMigrated(runtime);
  onShutdownSignal(runtime, await startWebPart(runtime), 1);
}

/** `worker`: a job worker. */
export async function workerCommand(config: Config): Promise<void> {
  const runtime = await openRuntime(config, { name: "worker" });
  await requireMigrated(runtime);
  onShutdownSignal(runtime, await startWorkerPart(runtime), 1);
}

/** `start`: migrate, then API and one worker in this process. */
export async function startCommand(config: Config): Promise<void> {
  const log = createLogger(config.logLevel);
  const database = await openDatabase(config, log);
  const { applied } = await migrate(database.url, (line) => log.info(line));
  if (applied.length) log.info(`applied ${applied.length} migration(s)`);
  const runtime = await openRuntime(config, { database });
  const stopWorker = await startWorkerPart(runtime);
  const stopWeb = await startWebPart(runtime);
  onShutdownSignal(
    runtime,
    async () => {
      await stopWeb();
      await stopWorker();
    },
    2,
  );
}
