/**
 * Types shared by the Koa app: what every request can reach (`ctx.deps`) and what the
 * middleware puts on `ctx.state`.
 */
import type { ParameterizedContext } from "koa";
import type { Scope } from "../shared/auth/scopes.ts";
import type { Config } from "../shared/config.ts";
import type { DatabasePool } from "../shared/db/pool.ts";
import type { Role, UserRow } from "../shared/db/users.ts";
import type { EventHub } from "../shared/events/hub.ts";
import type { Logger } from "../shared/logger.ts";
import type { SettingsCache } from "../shared/settings/cache.ts";
import type { Storage } from "../shared/storage/storage.ts";
import type { TemplateCompiler } from "../shared/template/compiler/pool.ts";
import type { Identity } from "./identity.ts";
import type { PerformanceRollup } from "./performanceRollup.ts";
import type { ServerTimings } from "./serverTimings.ts";
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
  /** The global settings, cached and invalidated across processes (shared/settings/cache.ts). */
  settings: SettingsCache;
  /** Sampled request durations, flushed to performance_measures (api/serverTimings.ts). */
  timings: ServerTimings;
  /** This process's share of the daily performance histograms (api/performanceRollup.ts). */
  rollup: PerformanceRollup;
  /** Template checks and output plans, on compile threads (shared/template/compiler/pool.ts). */
  compiler: TemplateCompiler;
}

/** What the presented token may do (shared/auth/scopes.ts). */
export interface TokenScopes {
  /** Effective scopes: the token's, with `*` expanded, limited to what the user's roles allow. */
  scopes: Scope[];
  /** Administrator roles the user holds but this token may not act with (it lacks `admin`). */
  withheldRoles: Role[];
}

/** How the caller authenticated. */
export type AuthMethod = TokenScopes &
  (
    | { kind: "personal_token"; tokenId: number; abilities: string[] }
    | { kind: "jwt"; jti: string; scope: string; clientId: string; expiresAt: Date; grantId: string | null }
  );

export interface AppState {
  requestId: string;
  log: Logger;
  /** Set by `authenticate` on bearer routes; `roles` are those the token acts with (see TokenScopes). */
  user?: UserRow;
  auth?: AuthMethod;
  /** Set by the body reader when the body's JSON text shows no string of it holds a NUL or an unpaired surrogate (shared/storableText.ts). */
  bodyStorable?: true;
}

export type AppContext = ParameterizedContext<AppState, { deps: AppDeps }>;

/** The authenticated user of a bearer route. @throws when used on a public route (programming error). */
export function currentUser(ctx: AppContext): UserRow {
  const user = ctx.state.user;
  if (!user) throw new Error("currentUser() called on a route without authentication");
  return user;
}
