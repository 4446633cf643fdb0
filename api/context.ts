/**
 * Types shared by the Koa app: what every request can reach (`ctx.deps`) and what the
 * middleware puts on `ctx.state`.
 */
import type { ParameterizedContext } from "koa";
import type { Config } from "../shared/config.ts";
import type { DatabasePool } from "../shared/db/pool.ts";
import type { UserRow } from "../shared/db/users.ts";
import type { EventHub } from "../shared/events/hub.ts";
import type { Logger } from "../shared/logger.ts";
import type { Storage } from "../shared/storage/storage.ts";
import type { Identity } from "./identity.ts";
import type { AppMetrics } from "./metrics.ts";

/** Process-wide resources of a web process. */
export interface AppDeps {
  config: Config;
  pool: DatabasePool;
  log: Logger;
  hub: EventHub;
  metrics: AppMetrics;
  storage: Storage;
  identity: Identity;
}

/** How the caller authenticated. */
export type AuthMethod =
  | { kind: "personal_token"; tokenId: number; abilities: string[] }
  | { kind: "jwt"; jti: string; scope: string; clientId: string; expiresAt: Date; grantId: string | null };

export interface AppState {
  requestId: string;
  log: Logger;
  /** Set by `authenticate` on bearer routes. */
  user?: UserRow;
  auth?: AuthMethod;
}

export type AppContext = ParameterizedContext<AppState, { deps: AppDeps }>;

/** The authenticated user of a bearer route. @throws when used on a public route (programming error). */
export function currentUser(ctx: AppContext): UserRow {
  const user = ctx.state.user;
  if (!user) throw new Error("currentUser() called on a route without authentication");
  return user;
}
