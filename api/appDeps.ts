/**
 * Assembles the resources of a web process from the runtime's basics.
 */
import type { Config } from "../shared/config.ts";
import type { DatabasePool } from "../shared/db/pool.ts";
import type { EventHub } from "../shared/events/hub.ts";
import type { Logger } from "../shared/logger.ts";
import { SettingsCache } from "../shared/settings/cache.ts";
import { PostgresStorage } from "../shared/storage/postgresStorage.ts";
import type { AppDeps } from "./context.ts";
import { createIdentity } from "./identity.ts";
import { AppMetrics } from "./metrics.ts";
import { ServerTimings } from "./serverTimings.ts";

export async function buildAppDeps(base: { config: Config; pool: DatabasePool; log: Logger; hub: EventHub }): Promise<AppDeps> {
  const settings = new SettingsCache(base.pool);
  settings.attach(base.hub);
  return {
    settings,
    timings: new ServerTimings(base.pool, base.log),
    ...base,
    metrics: new AppMetrics(base.pool),
    storage: new PostgresStorage(base.pool),
    identity: await createIdentity(base.config, base.pool, base.log),
  };
}
