/**
 * Maintenance mode (PUT /admin/settings): while it is on, every request of a caller who is
 * not a site administrator answers 503 `maintenance` with the administrators' message and
 * `Retry-After`. Exempt are the routes an operator needs to see and end it: the System
 * routes (health, metrics, the document), and signing in (so an administrator can get a
 * token); the OAuth token endpoint is mounted outside the routes and stays open too.
 */
import type { Next } from "koa";
import { AppError } from "../../shared/errors.ts";
import type { AppContext } from "../context.ts";
import { isSiteAdmin } from "../policies/roles.ts";
import type { RouteSpec } from "../routes/route.ts";
import type { GlobalSettingsRow } from "../../shared/settings/store.ts";

const openPaths = new Set(["/auth/login", "/auth/login-2fa", "/realtime/config"]);

/** Whether `route` answers during maintenance for everyone. */
export const maintenanceExempt = (route: Pick<RouteSpec, "path" | "tags" | "root">) =>
  Boolean(route.root) || route.tags.includes("System") || openPaths.has(route.path);

/**
 * Koa middleware (after `authenticate` on bearer routes): 503 during maintenance unless the
 * caller is a site administrator. With the settings cached it answers without a promise of
 * its own (one of several awaits a simple request used to pass through).
 */
export function maintenanceGate(ctx: AppContext, next: Next): Promise<void> {
  const cached = ctx.deps.settings.cached();
  if (cached) {
    gate(ctx, cached);
    return next();
  }
  return ctx.deps.settings.get().then((settings) => {
    gate(ctx, settings);
    return next();
  });
}

function gate(ctx: AppContext, settings: GlobalSettingsRow): void {
  if (settings.maintenance_enabled && !(ctx.state.user && isSiteAdmin(ctx.state.user))) {
    const message = settings.maintenance_message ?? "The service is down for maintenance; please try again later.";
    throw new AppError(503, "maintenance", message, undefined, { "Retry-After": String(settings.maintenance_retry_after_s) });
  }
}
