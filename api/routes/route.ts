/**
 * Routes are declared as data: method, path, auth, zod schemas for params, query and body,
 * documented responses and the handler. One list of these both builds the Koa router
 * (authenticate → body → validate → handler) and describes the API in OpenAPI 3.1, so
 * every route is validated and documented by the same declaration.
 */
import type { Config } from "../../shared/config.ts";
import type { z } from "zod";
import type { AppContext } from "../context.ts";

export type Method = "get" | "post" | "put" | "patch" | "delete";

/** How a request body is read. */
export type BodyKind = "json" | "form" | "multipart" | "json-or-form" | "json-or-multipart";

export interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  /** Content type of a non-JSON response (downloads). */
  contentType?: string;
}

export interface RouteInput<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> {
  params: z.output<P>;
  query: z.output<Q>;
  body: z.output<B>;
}

export interface RouteSpec<P extends z.ZodType = z.ZodType, Q extends z.ZodType = z.ZodType, B extends z.ZodType = z.ZodType> {
  method: Method;
  /** Path below /api (or absolute when `root` is set), with `{name}` parameters as in the spec. */
  path: string;
  /** Mount at the server root instead of below /api (e.g. /metrics). */
  root?: boolean;
  summary: string;
  description?: string;
  tags: string[];
  /** `bearer` routes answer 401 without a valid token. */
  auth: "public" | "bearer";
  /**
   * The token scope a bearer route needs (shared/auth/scopes.ts). By default `read` for GET
   * and `write` for every other method; `none` marks the short list of routes any valid
   * token may call (POST /logout), `read` a POST that only looks (channel authorization).
   * Routes under /admin/ need the `admin` scope as well.
   */
  scope?: "none" | "read" | "write";
  params?: P;
  query?: Q;
  body?: B;
  /**
   * A hand-written reading of the usual body that returns what `body` parses it to, or
   * undefined to let `body` read it (and word any 422); it must accept nothing `body`
   * refuses. For bodies of hundreds of items, where zod's per-item cost shows.
   */
  quickBody?: (value: unknown) => z.output<B> | undefined;
  bodyKind?: BodyKind;
  /** JSON/form body limit for this route, when it differs from BODY_LIMIT_BYTES (bundles, SQL text). */
  bodyLimitBytes?: number | ((config: Config) => number);
  responses: Record<number, ResponseSpec>;
  /** Public route exempt from the per-IP limit (health checks, metrics, docs assets). */
  unlimited?: boolean;
  /** Hidden from the OpenAPI document (the document itself, the docs page). */
  hidden?: boolean;
  handler: (ctx: AppContext, input: RouteInput<P, Q, B>) => Promise<void> | void;
}

/** Declares a route; the identity function, there for type inference of `input`. */
export function defineRoute<P extends z.ZodType = z.ZodType, Q extends z.ZodType = z.ZodType, B extends z.ZodType = z.ZodType>(
  spec: RouteSpec<P, Q, B>,
): RouteSpec {
  return spec;
}

/** What a bearer route needs of a token's scopes (see `RouteSpec.scope`). */
export const routeScope = (route: Pick<RouteSpec, "method" | "path" | "scope">) => ({
  scope: route.scope ?? (route.method === "get" ? "read" : "write"),
  admin: route.path === "/admin" || route.path.startsWith("/admin/"),
});

/** `/jobs/{id}` → `/jobs/:id` for the router. */
export const toRouterPath = (path: string) => path.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, ":$1");
