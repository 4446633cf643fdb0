/**
 * Assembles the resources of a web process from the runtime's basics.
 */
import type { Config } from "../shared/config.ts";
import type { DatabasePool } from "../shared/db/pool.ts";
import type { EventHub } from "../shared/events/hub.ts";
import type { Logger } from "../shared/logger.ts";
import { SettingsCache } from "../shared/settings/cache.ts";
import { PostgresStorage } from "../shared/storage/postgresStorage.ts";
import { TemplateCompiler } from "../shared/template/compiler/pool.ts";
import type { AppDeps } from "./context.ts";
import { createIdentity } from "./identity.ts";
import { CLIENT_CHANGES_CHANNEL } from "./oauth/accessTokens.ts";
import { AppMetrics } from "./metrics.ts";
import { PerformanceRollup } from "./performanceRollup.ts";
import { ServerTimings } from "./serverTimings.ts";

export async function buildAppDeps(base: { config: Config; pool: DatabasePool; log: Logger; hub: EventHub }): Promise<AppDeps> {
  const identity = await createIdentity(base.config, base.pool, base.log);
  // A revoked client's tokens stop working in every process at once; after a reconnect
  // (announcements may have been missed) the whole cache is read again.
  base.hub.listen(CLIENT_CHANGES_CHANNEL, (clientId) => identity.clients.forget(clientId));
  base.hub.onReconnect(() => {
    identity.clients.reload().catch((error: unknown) => base.log.warn({ err: error }, "could not reload the OAuth client cache"));
  });
  const rollup = new PerformanceRollup(base.pool, base.log);
  const settings = new SettingsCache(base.pool);
  settings.attach(base.hub);
  return {
    settings,
    rollup,
    timings: new ServerTimings(base.pool, base.log, rollup),
    ...base,
    metrics: new AppMetrics(base.pool),
    storage: new PostgresStorage(base.pool),
    identity,
    compiler: new TemplateCompiler(base.config.templates.compile),
  };
}
