/**
 * The composition root of a process: configuration, logger, database (embedded when
 * DATABASE_URL is unset), Slonik pool, LISTEN connection and event hub. The CLI commands
 * open one runtime and start the web and/or worker parts on it.
 */
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
  const pool = await createPool(database.url, { maxPoolSize: config.databasePoolSize });
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
      await listener.stop();
      await pool.end();
      await database.stop();
    },
  };
}
