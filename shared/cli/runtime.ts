/**
 * The composition root of a process: configuration, logger, database (embedded when
 * DATABASE_URL is unset), Slonik pool, LISTEN connection and event hub. The CLI commands
 * open one runtime and start the web and/or worker parts on it.
 */
import { randomBytes } from "node:crypto";
import path from "node:path";
import pg from "pg";
import { loadConfig, type Config } from "../config.ts";
import { startEmbeddedPostgres } from "../db/embedded.ts";
import { createPool, type DatabasePool } from "../db/pool.ts";
import { EventHub } from "../events/hub.ts";
import { PgListener } from "../events/listener.ts";
import { withDevelopmentDefaults } from "../localData.ts";
import { createLogger, type Logger } from "../logger.ts";
import "../validation.ts";

export interface Database {
  url: string;
  embedded: boolean;
  stop(): Promise<void>;
}

/**
 * How long closing the pool waits at shutdown for queries still running. By then the web
 * part has cut off the requests that outlived SHUTDOWN_TIMEOUT_MS and the worker part has
 * stopped its jobs, so such a query answers no one: after this grace it is cancelled.
 */
const POOL_CLOSE_GRACE_MS = 1000;
/** Upper bound of each later shutdown step (closing the LISTEN connection, cancelling queries, the pool's last close). */
const CLOSE_STEP_MS = 2000;

/** Resolves true when `promise` settles within `ms`, false otherwise. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const settled = promise.then(
    () => true as const,
    () => true as const,
  );
  try {
    return await Promise.race([settled, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `url` with an application_name unique to this process's pool (the operator's own name,
 * if the URL gives one, as its prefix), so its backends can be found in pg_stat_activity:
 * by operators, and by `closePool` to cancel what still runs at shutdown.
 */
function poolUrl(url: string, name: string): { url: string; applicationName: string } {
  const u = new URL(url);
  const given = u.searchParams.get("application_name");
  // PostgreSQL cuts names at 63 bytes, which would make this one unfindable: a longer given name is not used.
  const prefix = given && Buffer.byteLength(given) <= 50 ? given : `schemaforge-${name}`;
  const applicationName = `${prefix}-${randomBytes(4).toString("hex")}`;
  u.searchParams.set("application_name", applicationName);
  return { url: u.toString(), applicationName };
}

/** Terminates the backends of this process's pool still running; resolves with how many. */
async function terminateBackends(url: string, applicationName: string): Promise<number> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CLOSE_STEP_MS, application_name: "schemaforge-shutdown" });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      "select count(*) filter (where pg_terminate_backend(pid))::int as n from pg_stat_activity where application_name = $1 and pid <> pg_backend_pid()",
      [applicationName],
    );
    return rows[0]?.n ?? 0;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Ends the pool within a bounded time: queries still running after POOL_CLOSE_GRACE_MS
 * have their backends terminated (which rolls back their transactions and frees their
 * locks), since Slonik alone would wait for each of them up to its own 5 s twice over.
 */
async function closePool(pool: DatabasePool, url: string, applicationName: string, log: Logger): Promise<void> {
  const ended = pool.end().catch((error: unknown) => log.warn({ err: error }, "closing the database pool failed"));
  if (await settlesWithin(ended, POOL_CLOSE_GRACE_MS)) return;
  const cancelling = terminateBackends(url, applicationName);
  const cancelled = await settlesWithin(cancelling, CLOSE_STEP_MS);
  log.warn(
    { terminated: cancelled ? await cancelling.catch(() => null) : null },
    `database queries were still running ${POOL_CLOSE_GRACE_MS} ms after shutdown began closing the pool; their backends were terminated`,
  );
  if (!(await settlesWithin(ended, CLOSE_STEP_MS))) log.warn("the database pool did not close in time; exiting without waiting for it");
}

export interface Runtime {
  config: Config;
  log: Logger;
  database: Database;
  pool: DatabasePool;
  listener: PgListener;
  hub: EventHub;
  close(): Promise<void>;
}

/** Reads the configuration (filling development defaults, and saying so on stderr when it generates them). @throws ConfigError */
export async function readConfig(env: Record<string, string | undefined> = process.env): Promise<Config> {
  return loadConfig(await withDevelopmentDefaults(env, { announce: (line) => process.stderr.write(`${line}\n`) }));
}

/** Connects to DATABASE_URL, or starts the embedded server under `<DATA_DIR>/pg`. */
export async function openDatabase(config: Config, log: Logger): Promise<Database> {
  if (config.databaseUrl) return { url: config.databaseUrl, embedded: false, stop: async () => {} };
  const server = await startEmbeddedPostgres({ dataDir: path.join(config.dataDir, "pg"), port: 54329 });
  if (server.binariesRelocation) log.info(`embedded PostgreSQL: ${server.binariesRelocation}`);
  if (server.relocation) log.info({ clusterDir: server.clusterDir }, `embedded PostgreSQL: ${server.relocation}`);
  log.info({ port: server.port, attached: !server.started }, "embedded PostgreSQL ready");
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  try {
    const exists = await admin.query("select 1 from pg_database where datname = 'schemaforge'");
    if (exists.rowCount === 0) await admin.query("create database schemaforge");
  } finally {
    await admin.end();
  }
  const url = new URL(server.url);
  url.pathname = "/schemaforge";
  return { url: url.toString(), embedded: true, stop: () => server.stop() };
}

/** Opens a full runtime: database, pool, listener and hub. */
export async function openRuntime(config: Config, options: { name?: string; database?: Database } = {}): Promise<Runtime> {
  const log = createLogger(config.logLevel, options.name);
  const database = options.database ?? (await openDatabase(config, log));
  const tagged = poolUrl(database.url, options.name ?? "start");
  const pool = await createPool(tagged.url, { maxPoolSize: config.databasePoolSize });
  const listener = new PgListener(database.url, log.child({ component: "listener" }));
  await listener.start();
  const hub = new EventHub(listener, pool, log.child({ component: "hub" }));
  hub.start();
  return {
    config,
    log,
    database,
    pool,
    listener,
    hub,
    close: async () => {
      hub.stop();
      if (!(await settlesWithin(listener.stop(), CLOSE_STEP_MS))) log.warn("the LISTEN connection did not close in time");
      await closePool(pool, database.url, tagged.applicationName, log);
      await database.stop();
    },
  };
}
