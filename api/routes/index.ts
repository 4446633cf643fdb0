/**
 * Every route of the API, in one list: the router and the OpenAPI document are built from it.
 */
import type { RouteSpec } from "./route.ts";
import { broadcastingRoutes } from "./broadcasting/broadcasting.router.ts";
import { jobRoutes } from "./jobs/jobs.router.ts";
import { systemRoutes } from "./system/system.router.ts";

export const allRoutes: RouteSpec[] = [...systemRoutes, ...jobRoutes, ...broadcastingRoutes];
